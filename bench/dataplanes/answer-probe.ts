// What a client sees of one host through a proxy, asked again and again on one kept-alive
// connection: node:http, because the zero-hop answers come chunked (nginx's Lua) or without a
// body (Caddy), which bench/http-probe.ts's reader does not parse.

import http from "node:http";
import { SEEN_HEADER } from "./seen-upstream.ts";

/** The part of an answer a write changes: its status and `x-mirror-reason`. */
export interface SeenAnswer {
  readonly status: number;
  readonly reason: string | null;
}

/** An answer as the probe reads it: also the upstream's `x-seen-authorization`, when it set one. */
export interface ProbeAnswer extends SeenAnswer {
  readonly seen: string | null;
}

/** Whether `seen` is `want`. */
export const sameAnswer = (seen: SeenAnswer, want: SeenAnswer) =>
  seen.status === want.status && seen.reason === want.reason;

/** One kept-alive connection to a proxy on 127.0.0.1. */
export interface AnswerProbe {
  /** One request for `host`; rejects when the connection fails (the next call opens another). */
  ask(host: string): Promise<ProbeAnswer>;
  close(): void;
}

/** A probe of 127.0.0.1:`port`, sending `headers` besides the Host with every request. */
export function answerProbe(
  port: number,
  headers: Readonly<Record<string, string>> = {},
): AnswerProbe {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    ask: (host) =>
      new Promise((resolve, reject) => {
        const req = http.get(
          {
            host: "127.0.0.1",
            port,
            path: "/",
            headers: { ...headers, host },
            agent,
            timeout: 10_000,
          },
          (res) => {
            res.resume();
            res.on("error", reject);
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                reason: (res.headers["x-mirror-reason"] as string | undefined) ?? null,
                seen: (res.headers[SEEN_HEADER] as string | undefined) ?? null,
              }),
            );
          },
        );
        req.on("timeout", () => req.destroy(new Error(`no answer for ${host} in 10 s`)));
        req.on("error", reject);
      }),
    close: () => agent.destroy(),
  };
}

/**
 * Asks for `host` every `pauseMs` (a request, then the pause) until the answer is `want`; a failed
 * connection, as a reloading Caddy closes them, is one more try. Resolves with `performance.now()`
 * at that answer. Throws after `timeoutMs` from `since`, naming the last answer seen.
 */
export async function untilAnswer(
  probe: AnswerProbe,
  host: string,
  want: SeenAnswer,
  o: { readonly since: number; readonly pauseMs: number; readonly timeoutMs?: number },
): Promise<number> {
  const timeoutMs = o.timeoutMs ?? 30_000;
  for (;;) {
    const last = await probe.ask(host).catch((e: unknown) => e as Error);
    const now = performance.now();
    if (!(last instanceof Error) && sameAnswer(last, want)) return now;
    if (now - o.since > timeoutMs) {
      const seen = last instanceof Error ? last.message : `${last.status} ${last.reason ?? ""}`;
      throw new Error(
        `${host}: not ${want.status} ${want.reason ?? ""} in ${timeoutMs} ms (${seen})`,
      );
    }
    if (o.pauseMs > 0) await new Promise((r) => setTimeout(r, o.pauseMs));
  }
}
