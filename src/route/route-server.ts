import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { ERRORS, type RouteOutcome } from "../answers/reasons.ts";
import {
  type RetryAfterSeconds,
  type RouteAnswer,
  routeAnswerer,
} from "../answers/route-answer.ts";
import type { RouteView } from "../snapshot/types.ts";
import { capConnections } from "./connection-cap.ts";
import { type ListenerLimits, LOOPBACK_LIMITS, serverOptions } from "./listener-limits.ts";
import { isRoutePath, targetAuthority } from "./route-path.ts";

export interface RouteServerOptions {
  /** The view answered from, read once per request: a single field read. Null: not synced. */
  readonly view: () => RouteView | null;
  readonly retryAfter: RetryAfterSeconds;
  /** Counts each route answer; called on the hot path, so it must be cheap. */
  readonly counted?: (outcome: RouteOutcome) => void;
  /** Answering threw (a bug): the request got a 500; the owner reports it. */
  readonly failed?: (error: Error) => void;
  /** Default: the loopback defaults (no idle timeout). */
  readonly limits?: ListenerLimits;
  /** A connection was closed to let a new one in at the cap; `idle` false: mid-request. */
  readonly evicted?: (idle: boolean) => void;
}

const NOT_FOUND = Object.freeze({ "x-mirror-reason": "not-found", "content-length": "0" });
const INTERNAL = Object.freeze({ "x-mirror-reason": "internal", "content-length": "0" });

/**
 * The data listener's HTTP server, not listening yet: `/v1/route` and `/v1/route/*` with every
 * method (Envoy's ext_authz forwards the client's method and path prefix), answered from the
 * view (README, "The routing contract"), the origin form or the absolute form, whose authority
 * stands for Host; every other target 404 `x-mirror-reason: not-found`.
 * No body is read; Node drains and drops one after the answer. A request Node's parser refuses
 * gets Node's own 400, 408 or 431 and the connection closes. At `limits.maxConnections` open
 * connections, each new one closes the longest-idle one (`capConnections`).
 */
export function createRouteServer(options: RouteServerOptions): Server {
  const answer = routeAnswerer(options.retryAfter);
  const counted = options.counted ?? (() => {});
  const failed = options.failed ?? (() => {});
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const url = request.url ?? "";
    if (!isRoutePath(url)) {
      response.writeHead(ERRORS["not-found"].status, withoutLength(request, NOT_FOUND));
      response.end();
      return;
    }
    const a = answer(options.view(), request.rawHeaders, targetAuthority(url));
    counted(a.outcome);
    response.writeHead(a.status, withoutLength(request, a.headers));
    response.end();
  };
  const limits = options.limits ?? LOOPBACK_LIMITS;
  // requireHostHeader: without it, Node answers an HTTP/1.1 request lacking Host with a bare 400
  // of its own; the route answers it with `x-mirror-reason: bad-host` like every other.
  const settings = { requireHostHeader: false, ...serverOptions(limits) };
  const server = createServer(settings);
  const answered = capConnections(server, limits.maxConnections, options.evicted ?? (() => {}));
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    try {
      handle(request, response);
    } catch (e) {
      failed(e instanceof Error ? e : new Error(String(e)));
      if (!response.headersSent) response.writeHead(ERRORS.internal.status, INTERNAL);
      response.end();
    }
    // The answer is whole: the connection is idle until its next request's first byte.
    answered(request.socket);
  });
  // On loopback no idle timeout on kept-alive connections (ADR 36): the co-located data plane owns
  // its pool, and a socket timeout costs a timer refresh on every read and write of every request.
  // No socket timeout either way: the idle timeout, when set, is the only one.
  server.setTimeout(0);
  return server;
}

/** A HEAD answer has no body to measure, so no content-length (as Node answers it). */
function withoutLength(
  request: IncomingMessage,
  headers: RouteAnswer["headers"],
): RouteAnswer["headers"] {
  if (request.method !== "HEAD") return headers;
  const { "content-length": _, ...rest } = headers;
  return rest;
}
