// What a data plane sees of a `/v1/route` answer through `inject()`, and the answers the
// contract fixes (README "The routing contract").

import type { FastifyInstance, InjectOptions } from "fastify";

/** What a data plane sees of an answer: status, the headers that vary by answer, the body. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

// Set by Node or Fastify on every answer; not part of the contract under test.
const TRANSPORT_HEADERS = new Set(["date", "connection", "keep-alive"]);

/** Injects a request and keeps the status, the contract's headers and the body. */
export async function answer(app: FastifyInstance, options: InjectOptions): Promise<Answer> {
  const response = await app.inject(options);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (!TRANSPORT_HEADERS.has(name) && value !== undefined) headers[name] = String(value);
  }
  return { status: response.statusCode, headers, body: response.body };
}

/** A route request for `host` (as Host), with extra headers. */
export function routeRequest(
  host: string | string[],
  extra: Record<string, string> = {},
  method: InjectOptions["method"] = "GET",
): InjectOptions {
  const headers: Record<string, string | string[]> = { ...extra, host };
  return { method, url: "/v1/route", headers };
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
