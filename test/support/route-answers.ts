// What a data plane sees of a `/v1/route` answer over a real socket, and the answers the contract
// fixes (README "The routing contract").

import type { AddressInfo } from "node:net";
import type { RouteOutcome } from "../../src/answers/reasons.ts";
import { DEFAULT_RETRY_AFTER, type RetryAfterSeconds } from "../../src/answers/route-answer.ts";
import { createRouteServer } from "../../src/route/route-server.ts";
import type { RouteView } from "../../src/snapshot/types.ts";
import { RawConnection } from "./raw-http.ts";

/** What a data plane sees of an answer: status, the headers that vary by answer, the body. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** One request as its bytes will be written: repeated headers as arrays. */
export interface RequestLine {
  readonly method?: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly payload?: string;
}

// Set by Node on every answer; not part of the contract under test.
const TRANSPORT_HEADERS = new Set(["date", "connection", "keep-alive"]);

/** Sends one request on its own connection and keeps the status, the contract's headers and the body. */
export async function answer(
  server: { readonly port: number },
  request: RequestLine,
): Promise<Answer> {
  const method = request.method ?? "GET";
  const lines = [`${method} ${request.url} HTTP/1.1`];
  for (const [name, value] of Object.entries(request.headers))
    for (const v of typeof value === "string" ? [value] : value) lines.push(`${name}: ${v}`);
  if (request.payload !== undefined)
    lines.push(`content-length: ${Buffer.byteLength(request.payload)}`);
  const c = new RawConnection(server.port);
  try {
    const e = await c.exchange(
      Buffer.from(`${lines.join("\r\n")}\r\n\r\n${request.payload ?? ""}`, "latin1"),
      method === "HEAD",
    );
    if (e.kind !== "answer") throw new Error(`no answer: ${e.kind}`);
    const headers: Record<string, string> = {};
    for (const [name, value] of e.response.headers)
      if (!TRANSPORT_HEADERS.has(name)) headers[name] = value;
    return { status: e.response.status, headers, body: e.response.body.toString("latin1") };
  } finally {
    c.destroy();
  }
}

/** A route request for `host` (as Host), with extra headers. */
export function routeRequest(
  host: string | string[],
  extra: Record<string, string> = {},
  method = "GET",
): RequestLine {
  return { method, url: "/v1/route", headers: { host, ...extra } };
}

/** The data listener's server (`createRouteServer`) on a free loopback port, answering from `view`. */
export async function startRouteServer(options: {
  readonly view: () => RouteView | null;
  readonly retryAfter?: RetryAfterSeconds;
  readonly counted?: (outcome: RouteOutcome) => void;
}): Promise<{ readonly port: number; close(): Promise<void> }> {
  const server = createRouteServer({
    view: options.view,
    retryAfter: options.retryAfter ?? DEFAULT_RETRY_AFTER,
    ...(options.counted === undefined ? {} : { counted: options.counted }),
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const routed = (app: string, revision: number, upstream?: string): Answer => ({
  status: 200,
  headers: {
    "x-mirror-app": app,
    ...(upstream === undefined ? {} : { "x-mirror-upstream": upstream }),
    "x-mirror-revision": String(revision),
    "content-length": "0",
  },
  body: "",
});

export const refused = (status: number, reason: string): Answer => ({
  status,
  headers: { "x-mirror-reason": reason, "content-length": "0" },
  body: "",
});

export const notSynced: Answer = {
  status: 503,
  headers: { "retry-after": "1", "x-mirror-reason": "not-synced", "content-length": "0" },
  body: "",
};

export const secretUnavailable = (app: string, retryAfter = "5"): Answer => ({
  status: 503,
  headers: {
    "retry-after": retryAfter,
    "x-mirror-reason": "secret-unavailable",
    "x-mirror-app": app,
    "content-length": "0",
  },
  body: "",
});
