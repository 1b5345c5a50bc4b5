import type { FastifyInstance } from "fastify";
import type { StatusAppOptions } from "./status-app.ts";

/** The lookup and status API's app, built when first asked for. */
export interface StatusAppLoader {
  /** The app, ready; the first call builds it, every call gets the same one (or failure). */
  app(): Promise<FastifyInstance>;
  /** Closes the app if it was ever built. */
  close(): Promise<void>;
}

/**
 * Builds the status API on its first request, never at start: most replicas never get one, and
 * Fastify with its schema compilers is half the bundle, in a chunk of its own that the start
 * does not load (ADR 43).
 */
export function statusAppOnFirstUse(options: StatusAppOptions): StatusAppLoader {
  let built: Promise<FastifyInstance> | undefined;
  return {
    app() {
      built ??= import("./status-app.ts").then(async ({ createStatusApp }) => {
        const app = createStatusApp(options);
        await app.ready();
        return app;
      });
      return built;
    },
    async close() {
      const app = await built?.catch(() => undefined);
      await app?.close();
    },
  };
}
