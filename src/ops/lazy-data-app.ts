import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { answerForwarded } from "../route/forward.ts";
import type { ForwardedAnswer, ForwardedRequest } from "../route/messages.ts";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import type { Metrics } from "./metrics.ts";

/** The data listener's Fastify app, loaded or not: what the data thread forwards goes here. */
export interface LazyDataApp {
  /** Answers a forwarded request, loading the app first if it is not yet. Rejects on a bug. */
  answer(request: ForwardedRequest): Promise<ForwardedAnswer>;
  /** Closes the app if it was loaded. */
  close(): Promise<void>;
}

interface Loaded {
  readonly app: FastifyInstance;
  readonly answer: typeof answerForwarded;
}

/**
 * The data listener's Fastify app (the lookup and status API, `createDataServer`), which answers
 * what the data thread forwards and never listens, imported when the first such request comes
 * (ADR 28): Fastify is the largest part of the bundle to load, nothing on the way to ready needs
 * it, and the data plane's requests never reach it. That first request waits for the load.
 */
export function lazyDataApp(options: {
  readonly holder: SnapshotHolder;
  readonly logger: Logger;
  readonly metrics: Metrics;
}): LazyDataApp {
  let loading: Promise<Loaded> | null = null;
  const loaded = (): Promise<Loaded> => {
    loading ??= Promise.all([import("./data-server.ts"), import("../route/forward.ts")]).then(
      async ([{ createDataServer }, forward]) => {
        const app = createDataServer(options);
        await app.ready();
        return { app, answer: forward.answerForwarded };
      },
    );
    return loading;
  };
  return {
    async answer(request) {
      const { app, answer } = await loaded();
      return answer(app, request);
    },
    async close() {
      if (loading !== null) await (await loading).app.close();
    },
  };
}
