// One request to a proxy's HTTP runtime interface over its Unix socket (Caddy's admin API,
// nginx's push listener): its status and body, or why there is none, as a PushFailure. node:http,
// not fetch: fetch cannot reach a Unix socket, and it would load undici (kept out of the start,
// ADR 59). One connection per request: a kept-alive one that the proxy closes while idle fails
// the next request.

import http from "node:http";
import { err, ok, type Result } from "../result.ts";
import type { PushFailure } from "./target.ts";

export interface AdminAnswer {
  readonly status: number;
  readonly text: string;
}

export interface AdminRequest {
  readonly method: string;
  /** The request target, `/replica-mirror/table`. */
  readonly path: string;
  /**
   * The Host header, sent as given, empty included: Caddy 2.6's admin API on a Unix socket
   * answers 403 to any other Host than an empty one.
   */
  readonly host: string;
  readonly contentType?: string;
  readonly body?: string;
}

/**
 * Sends one request to the Unix socket at `socket`; `timeout` after `timeoutMs`, `unreachable`
 * when nothing listens there (refused, no such file), `protocol` for any other failure. Never
 * rejects.
 */
export function adminCall(
  socket: string,
  timeoutMs: number,
  request: AdminRequest,
): Promise<Result<AdminAnswer, PushFailure>> {
  const what = `${request.method} unix:${socket}${request.path}`;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: Result<AdminAnswer, PushFailure>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(result);
    };
    const headers: http.OutgoingHttpHeaders = { host: request.host, connection: "close" };
    if (request.contentType !== undefined) headers["content-type"] = request.contentType;
    if (request.body !== undefined) headers["content-length"] = Buffer.byteLength(request.body);
    const req = http.request(
      {
        socketPath: socket,
        method: request.method,
        path: request.path,
        headers,
        setHost: false,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          settle(ok({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() })),
        );
        res.on("error", (e) =>
          settle(err({ reason: "protocol", message: `${what}: ${e.message}` })),
        );
      },
    );
    const timer = setTimeout(
      () => settle(err({ reason: "timeout", message: `${what}: no answer in ${timeoutMs} ms` })),
      timeoutMs,
    );
    req.on("error", (e: NodeJS.ErrnoException) => {
      const refused = e.code === "ECONNREFUSED" || e.code === "ENOENT";
      settle(
        err({
          reason: refused ? "unreachable" : "protocol",
          message: `${what}: ${e.code ?? e.message}`,
        }),
      );
    });
    req.end(request.body);
  });
}

/** The proxy's refusal: the request, its status and the start of its answer. */
export function adminRefused(what: string, answer: AdminAnswer): Result<never, PushFailure> {
  return err({
    reason: "rejected",
    message: `${what}: ${answer.status} ${answer.text.slice(0, 300)}`,
  });
}
