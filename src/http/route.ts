import type { FastifyReply, FastifyRequest } from "fastify";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import { lookup } from "../snapshot/lookup.ts";
import { headerValue } from "./header-value.ts";
import { requestHost } from "./host-header.ts";
import { ERRORS, type RouteOutcome } from "./reasons.ts";

/** Counts `/v1/route` answers. Called once per request on the hot path: it must be cheap. */
export interface RouteMetrics {
  routeAnswered(outcome: RouteOutcome): void;
}

/** The `retry-after` of each 503, in whole seconds. */
export interface RetryAfterSeconds {
  readonly notSynced: number;
  readonly secretUnavailable: number;
}

/**
 * `not-synced` lasts until the first list completes, about a second after start; a missing
 * Secret waits for someone to create it, so asking again sooner only adds load.
 */
export const DEFAULT_RETRY_AFTER: RetryAfterSeconds = { notSynced: 1, secretUnavailable: 5 };

/**
 * The `/v1/route` answer: one read of the holder, no await before the reply, an empty body.
 * 200 with `x-mirror-app`, `x-mirror-upstream` (when set) and `x-mirror-revision`; 503 with
 * `retry-after` and `x-mirror-reason: not-synced`, or `secret-unavailable` plus `x-mirror-app`;
 * 404 `unknown-host`; 400 `bad-host`. Never reads the request body.
 */
export function routeAnswerer(
  holder: SnapshotHolder,
  metrics: RouteMetrics | undefined,
  retryAfter: RetryAfterSeconds,
): (request: FastifyRequest, reply: FastifyReply) => void {
  const notSyncedRetry = String(retryAfter.notSynced);
  const unavailableRetry = String(retryAfter.secretUnavailable);
  const count = metrics === undefined ? () => {} : (o: RouteOutcome) => metrics.routeAnswered(o);

  return function answerRoute(request, reply) {
    const snapshot = holder.current();
    if (snapshot === null) {
      count("not-synced");
      reply
        .code(ERRORS["not-synced"].status)
        .header("retry-after", notSyncedRetry)
        .header("x-mirror-reason", "not-synced")
        .send();
      return;
    }
    const host = requestHost(request.headers, request.raw.rawHeaders);
    const found = host === null ? null : lookup(snapshot, host);
    if (found === null || found.kind === "bad-host") {
      count("bad-host");
      reply.code(ERRORS["bad-host"].status).header("x-mirror-reason", "bad-host").send();
    } else if (found.kind === "unknown") {
      count("unknown-host");
      reply.code(ERRORS["unknown-host"].status).header("x-mirror-reason", "unknown-host").send();
    } else if (found.app.ready) {
      count("routed");
      reply.header("x-mirror-app", found.app.name);
      if (found.app.upstream !== null)
        reply.header("x-mirror-upstream", headerValue(found.app.upstream));
      reply.header("x-mirror-revision", String(snapshot.revision)).send();
    } else {
      count("secret-unavailable");
      reply
        .code(ERRORS["secret-unavailable"].status)
        .header("retry-after", unavailableRetry)
        .header("x-mirror-reason", "secret-unavailable")
        .header("x-mirror-app", found.app.name)
        .send();
    }
  };
}
