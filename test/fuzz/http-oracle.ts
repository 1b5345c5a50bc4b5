// The oracle: which answers the contract (README "The routing contract" and "Lookup and status
// API") allows for each generated request, on each listener.
//
// Answers allowed, decided here once:
// - On the data listener, `/v1/route`, `/v1/route/*` (also with a query or fragment), any
//   method Node parses except CONNECT: exactly 200 (empty body, x-mirror-app, x-mirror-revision,
//   x-mirror-upstream when the App has one, x-mirror-credential when it has a credential), 503
//   (x-mirror-reason secret-unavailable or secret-unusable with x-mirror-app, or not-synced; and
//   retry-after; or credentials-off with x-mirror-app and no retry-after), 404 (x-mirror-reason
//   unknown-host), 400 (x-mirror-reason bad-host) or, for a request carrying x-mirror-app, 403
//   (x-mirror-reason routed-request); the body is always empty and x-mirror-reason appears at
//   most once. The host asked about is X-Forwarded-Host's, else an absolute-form target's
//   authority, else Host's; a name whose last label is a number is a bad host. Every other
//   target, whatever the method: 404 `x-mirror-reason: not-found`, empty body.
// - On the ops listener, `/v1/hosts/*`, `/v1/apps[/*]`, `/v1/snapshot` with GET or HEAD: 200, 400,
//   404 or 503 with a JSON body whose `error` is a catalogued code; GET or HEAD of `/healthz`,
//   `/readyz` or `/metrics`: 200 text; every other path, or another method there: 404
//   `{"error":"not-found"}` or 400 `{"error":"bad-request"}`; but for a request carrying
//   x-mirror-app, whatever the path but the probes': 403 text.
// - At the protocol level, on either listener, for a request Node's parser refuses (bad request
//   line or version, control characters, malformed framing, headers over 16 KiB): Node's own
//   400, 413 or 431 with `Connection: close` and no body, then the connection closes. Node's 417
//   for an `Expect` other than 100-continue, and its interim 100 Continue for 100-continue. A
//   CONNECT request gets no answer: Node closes the connection (no 'connect' listener). Node
//   never sent 505 here: HTTP/2.0 and HTTP/0.9 request lines are answered as HTTP/1.x, other
//   versions are a 400; 505 is therefore not allowed.
// - Never: a 5xx other than 503, a 503 outside the route and lookup API, no answer within 5 s,
//   an answer on a closed connection for a well-formed keep-alive request, Secret bytes anywhere.

import type { Exchange, RawResponse } from "../support/raw-http.ts";
import { header, headerCount } from "../support/raw-http.ts";
import { FORBIDDEN, type WorldApp } from "../support/world-apps.ts";
import { BAD, type Outcome, ROUTED_REQUEST, UNKNOWN } from "./http-hosts.ts";
import type { FuzzRequest } from "./http-request.ts";
import type { Family } from "./http-request-line.ts";

/** Node's answer to a request its parser refused: one header, no body. */
function isClientError(res: RawResponse): boolean {
  return (
    [400, 413, 431].includes(res.status) &&
    JSON.stringify(res.headers) === JSON.stringify([["connection", "close"]]) &&
    res.body.length === 0
  );
}
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;
const JSON_ERRORS = new Set([
  "not-synced",
  "unknown-host",
  "bad-host",
  "unknown-app",
  "not-found",
  "bad-request",
]);

/** Which listener answered. */
export type Listener = "data" | "ops";

/** The path family a listener routes this target to. */
function familyOf(r: FuzzRequest): Family | "probe" {
  const path = r.target.startsWith("http://") ? r.target.slice(r.target.indexOf("/", 7)) : r.target;
  if (/^\/v1\/route([/?#]|$)/.test(path)) return "route";
  if (!(r.method === "GET" || r.method === "HEAD")) return "other";
  if (/^\/v1\/(hosts\/|apps([/?#]|$)|snapshot([?#]|$))/.test(path)) return "api";
  if (/^\/(healthz|readyz|metrics)([?]|$)/.test(path)) return "probe";
  return "other";
}

/** A short label of an answer, for the tally the test reports. */
export function answerLabel(e: Exchange): string {
  if (e.kind !== "answer") return e.kind;
  const reason = header(e.response, "x-mirror-reason");
  return reason === undefined ? String(e.response.status) : `${e.response.status} ${reason}`;
}

/** The whole answer, shortened, for failure messages. */
export function describeAnswer(e: Exchange): string {
  if (e.kind !== "answer")
    return `${e.kind} ${JSON.stringify(e.received.toString("latin1").slice(0, 200))}`;
  const { status, headers, body } = e.response;
  return JSON.stringify({
    status,
    headers,
    body: body.toString("latin1").slice(0, 200),
    closed: e.closed,
  });
}

/**
 * Why this answer is not allowed for this request, or null when it is. `upstreams` gives each
 * App's upstream as its header carries it, `credentials` the credential of each App that has one
 * and is served (the fuzz world has none).
 */
export function violation(
  r: FuzzRequest,
  e: Exchange,
  upstreams: ReadonlyMap<string, string | null>,
  listener: Listener = "data",
  credentials: ReadonlyMap<string, string> = new Map(),
): string | null {
  if (e.kind === "timeout") return "no answer within the deadline";
  if (e.kind === "closed") {
    if (r.method === "CONNECT") return null;
    return `connection closed without an answer (received ${JSON.stringify(e.received.toString("latin1").slice(0, 200))})`;
  }
  const res = e.response;
  const text = res.body.toString("latin1");
  for (const f of FORBIDDEN) {
    if (text.includes(f) || res.headers.some(([, v]) => v.includes(f)))
      return "Secret bytes in the answer";
  }
  // Node joins repeated Expect lines with ", ".
  const expects = r.headers.filter(([n]) => n.toLowerCase() === "expect").map(([, v]) => v);
  const expect = expects.length === 0 ? undefined : expects.join(", ");
  if (
    res.interim.length > 0 &&
    !(res.interim.every((s) => s === 100) && expect !== undefined && CONTINUE.test(expect))
  )
    return `unexpected interim answers ${res.interim.join(",")}`;

  // Protocol level. The ops listener keeps Node's rule that an HTTP/1.1 request names its Host:
  // Node answers one that does not 400 with an empty body.
  const hostless = r.version === "HTTP/1.1" && !r.headers.some(([n]) => n.toLowerCase() === "host");
  if (listener === "ops" && hostless && res.status === 400 && res.body.length === 0) return null;
  if (isClientError(res)) {
    if (r.wellFormed) return `protocol-level ${res.status} for a well-formed request`;
    return null;
  }
  if (res.status === 417) {
    if (expect !== undefined && !CONTINUE.test(expect)) return null;
    return "417 without an Expect other than 100-continue";
  }
  if (r.reusable && e.closed) return "a well-formed keep-alive request's connection was closed";

  const family = familyOf(r);
  const reasons = headerCount(res, "x-mirror-reason");
  const reason = header(res, "x-mirror-reason");
  if (listener === "data" && family !== "route") {
    if (res.status !== 404 || reason !== "not-found" || reasons !== 1 || res.body.length !== 0)
      return `${r.method} ${r.target.slice(0, 40)} answered ${res.status} ${reason} ${text.slice(0, 80)}`;
    return null;
  }
  if (listener === "ops" && family === "probe") {
    if (res.status === 200 || (res.status === 503 && r.target.startsWith("/readyz"))) return null;
    return `probe ${r.target} answered ${res.status}`;
  }
  if (listener === "data") {
    if (res.body.length !== 0) return "route answer with a body";
    if (reasons > 1) return "x-mirror-reason repeated";
    let got: Outcome;
    switch (res.status) {
      case 200: {
        const app = header(res, "x-mirror-app");
        if (reason !== undefined) return "200 with x-mirror-reason";
        if (app === undefined || !upstreams.has(app)) return `200 for unknown App ${app}`;
        if (!/^\d+$/.test(header(res, "x-mirror-revision") ?? ""))
          return "200 without x-mirror-revision";
        const upstream = upstreams.get(app) ?? undefined;
        if (header(res, "x-mirror-upstream") !== upstream)
          return `x-mirror-upstream ${header(res, "x-mirror-upstream")} is not ${upstream}`;
        if (header(res, "x-mirror-credential") !== credentials.get(app))
          return `x-mirror-credential is not ${app}'s`;
        got = { status: 200, app };
        break;
      }
      case 503: {
        const retryAfter = /^\d+$/.test(header(res, "retry-after") ?? "");
        if (reason === "credentials-off" ? retryAfter : !retryAfter)
          return `503 ${reason} with retry-after ${header(res, "retry-after")}`;
        if (reason === "not-synced")
          return r.outcome === undefined ? null : "not-synced after sync";
        if (
          reason !== "secret-unavailable" &&
          reason !== "secret-unusable" &&
          reason !== "credentials-off"
        )
          return `503 with x-mirror-reason ${reason}`;
        const app = header(res, "x-mirror-app");
        if (app === undefined || !upstreams.has(app)) return `503 for unknown App ${app}`;
        // Only an App with a credential is ever unusable or off, and the fuzz world has none.
        if (reason !== "secret-unavailable")
          return `503 ${reason} for ${app}, without a credential`;
        got = { status: 503, reason, app };
        break;
      }
      case 403:
        if (reason !== "routed-request") return `403 with x-mirror-reason ${reason}`;
        got = ROUTED_REQUEST;
        break;
      case 404:
        if (reason !== "unknown-host") return `404 with x-mirror-reason ${reason}`;
        got = UNKNOWN;
        break;
      case 400:
        if (reason !== "bad-host") return `400 with x-mirror-reason ${reason}`;
        got = BAD;
        break;
      default:
        return `route answered ${res.status}`;
    }
    if (
      r.wellFormed &&
      r.outcome !== undefined &&
      JSON.stringify(got) !== JSON.stringify(r.outcome)
    )
      return `expected ${JSON.stringify(r.outcome)}, got ${JSON.stringify(got)}`;
    return null;
  }

  if (reasons > 0) return `x-mirror-reason on a ${family} answer`;
  // ADR 47: the status API answers no request a data plane routed, before Fastify sees it.
  if (r.headers.some(([n]) => n.toLowerCase() === "x-mirror-app"))
    return res.status === 403 && /^text\/plain/.test(header(res, "content-type") ?? "")
      ? null
      : `a routed request to the ops listener answered ${res.status}`;
  const json = r.method === "HEAD" ? null : parseJson(text);
  if (r.method !== "HEAD" && json === undefined)
    return `${res.status} body is not JSON: ${text.slice(0, 100)}`;
  if (!/^application\/json/.test(header(res, "content-type") ?? ""))
    return `${res.status} is not JSON`;
  const error =
    json !== null && json !== undefined && typeof json === "object"
      ? (json as { error?: unknown }).error
      : undefined;
  if (family === "api") {
    if (![200, 400, 404, 503].includes(res.status)) return `API answered ${res.status}`;
    if (res.status !== 200 && r.method !== "HEAD" && !JSON_ERRORS.has(String(error)))
      return `API error code ${String(error)}`;
    return null;
  }
  if (res.status === 404 && (r.method === "HEAD" || error === "not-found")) return null;
  if (res.status === 400 && (r.method === "HEAD" || error === "bad-request")) return null;
  return `${r.method} ${r.target.slice(0, 40)} answered ${res.status} ${text.slice(0, 80)}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The x-mirror-upstream each App's routed answer carries. */
export function upstreamHeaders(apps: readonly WorldApp[]): Map<string, string | null> {
  return new Map(
    apps.map((a) => [
      a.name,
      a.upstream === undefined
        ? null
        : a.upstream.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c)),
    ]),
  );
}
