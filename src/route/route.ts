import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RouteOutcome } from "../answers/reasons.ts";
import {
  type RetryAfterSeconds,
  type RouteAnswer,
  routeAnswerer,
} from "../answers/route-answer.ts";
import type { RouteView } from "../snapshot/types.ts";

/** Counts `/v1/route` answers. Called once per request on the hot path: it must be cheap. */
export interface RouteMetrics {
  routeAnswered(outcome: RouteOutcome): void;
}

/** Where the handlers read what they answer from: once per request, a single field read. */
export interface RouteViewSource {
  current(): RouteView | null;
}

/** The two ways a `/v1/route` answer reaches the wire, sharing one answerer. */
export interface RouteHandlers {
  /** Straight on Node's request and response: the data thread's path (ADR 27). */
  node(request: IncomingMessage, response: ServerResponse): void;
  /** Through Fastify: for `inject()` and Fastify's own errors. */
  fastify(request: FastifyRequest, reply: FastifyReply): void;
}

/**
 * The `/v1/route` handlers: one read of the holder, no await before the reply, an empty body;
 * the request body is never read. Both write the same status and headers.
 */
export function routeHandlers(
  holder: RouteViewSource,
  metrics: RouteMetrics | undefined,
  retryAfter: RetryAfterSeconds,
): RouteHandlers {
  const answer = routeAnswerer(retryAfter);
  const count = metrics === undefined ? () => {} : (o: RouteOutcome) => metrics.routeAnswered(o);
  return {
    node(request, response) {
      const a = answer(holder.current(), request.rawHeaders);
      count(a.outcome);
      response.writeHead(a.status, headersFor(request.method, a));
      response.end();
    },
    fastify(request, reply) {
      const a = answer(holder.current(), request.raw.rawHeaders);
      count(a.outcome);
      reply.code(a.status).headers(headersFor(request.method, a)).send();
    },
  };
}

/** A HEAD answer has no body to measure, so no content-length (as Node and Fastify answer it). */
function headersFor(method: string | undefined, a: RouteAnswer): RouteAnswer["headers"] {
  if (method !== "HEAD") return a.headers;
  const { "content-length": _, ...rest } = a.headers;
  return rest;
}
