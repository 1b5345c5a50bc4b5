import type { OutgoingHttpHeaders } from "node:http";
import { appAt, CHUNK_SIZE } from "../snapshot/app-table.ts";
import { lookupSlot } from "../snapshot/lookup.ts";
import type { RouteApp, RouteView } from "../snapshot/types.ts";
import { headerValue } from "./header-value.ts";
import { ROUTED_REQUEST, requestHost } from "./host-header.ts";
import { ERRORS, type RouteOutcome } from "./reasons.ts";

/** A `/v1/route` answer, whatever carries it: a status and headers, never a body. */
export interface RouteAnswer {
  readonly outcome: RouteOutcome;
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
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

// Every answer is empty and says so: the same bytes whether Fastify or Node writes the response.
const EMPTY = "0";

/**
 * Answers `/v1/route` from one Snapshot, or from the data thread's view of one (README, "The
 * routing contract"): 200 with `x-mirror-app`, `x-mirror-upstream` (when set),
 * `x-mirror-revision` and `x-mirror-credential` (an App with a credential); 503 with
 * `retry-after` and `x-mirror-reason: not-synced`, or `secret-unavailable` or `secret-unusable`
 * plus `x-mirror-app`; 503 `credentials-off` plus `x-mirror-app`, no `retry-after` (only the
 * operator changes it); 404 `unknown-host`; 400 `bad-host`; 403 `routed-request` for a request
 * that carries `x-mirror-app`. Pure: the raw header lines of the request and the authority of an
 * absolute-form target (null for the origin form) in, the answer out. This is the data plane's
 * hot path: it reads no `request.headers`, and the routed answer of an App is made once per
 * Snapshot, frozen, and given to every request for that App.
 */
export function routeAnswerer(
  retryAfter: RetryAfterSeconds,
): (
  snapshot: RouteView | null,
  rawHeaders: readonly string[],
  authority?: string | null,
) => RouteAnswer {
  const notSynced = fixed("not-synced", { "retry-after": String(retryAfter.notSynced) });
  const badHost = fixed("bad-host", {});
  const unknownHost = fixed("unknown-host", {});
  const routedRequest = fixed("routed-request", {});
  const unavailableRetry = String(retryAfter.secretUnavailable);
  // The Snapshot last answered from, its revision header, and the routed answer of each of its
  // Apps asked for so far (by slot): one frozen answer per App and Snapshot, not one per request.
  // A slot's answer is this Snapshot's only when `madeIn` holds the Snapshot's generation, so a
  // new Snapshot costs no pass over the slots: at 100k Apps a fresh array per Snapshot was 800 KB
  // written, and collected, for every change of one App (ADR 72).
  let answersOf: RouteView | null = null;
  let revision = "";
  let generation = 0;
  let routed: (RouteAnswer | undefined)[] = [];
  let madeIn = new Uint32Array(0);

  return function answerRoute(snapshot, rawHeaders, authority = null) {
    if (snapshot === null) return notSynced;
    const host = requestHost(rawHeaders, authority);
    if (host === null) return badHost;
    if (host === ROUTED_REQUEST) return routedRequest;
    const slot = lookupSlot(snapshot, host);
    if (slot === "unknown") return unknownHost;
    if (typeof slot !== "number") return badHost;
    const app = appAt(snapshot.apps, slot)!;
    const { state } = app;
    if (state !== "ready") {
      return {
        outcome: state,
        status: ERRORS[state].status,
        headers:
          state === "credentials-off"
            ? { "x-mirror-reason": state, "x-mirror-app": app.name, "content-length": EMPTY }
            : {
                "retry-after": unavailableRetry,
                "x-mirror-reason": state,
                "x-mirror-app": app.name,
                "content-length": EMPTY,
              },
      };
    }
    if (snapshot !== answersOf) {
      answersOf = snapshot;
      revision = String(snapshot.revision);
      const slots = appCount(snapshot);
      if (generation === MAX_GENERATION || madeIn.length !== slots) {
        // Another number of slots (a Registry change), or the generations ran out: all anew.
        routed = new Array<RouteAnswer | undefined>(slots).fill(undefined);
        madeIn = new Uint32Array(slots);
        generation = 0;
      }
      generation++;
    }
    if (madeIn[slot] === generation) return routed[slot]!;
    const made = Object.freeze({
      outcome: "routed",
      status: 200,
      headers: routedHeaders(app, revision),
    });
    routed[slot] = made;
    madeIn[slot] = generation;
    return made;
  };
}

/**
 * A routed answer's headers, in one order per shape (so every such object shares one hidden
 * class): the credential is a header value already (`credentialValue`), the upstream made one.
 */
function routedHeaders(app: RouteApp, revision: string): OutgoingHttpHeaders {
  const { name, upstream, credential } = app;
  const headers: OutgoingHttpHeaders =
    upstream === null
      ? { "x-mirror-app": name, "x-mirror-revision": revision, "content-length": EMPTY }
      : {
          "x-mirror-app": name,
          "x-mirror-upstream": headerValue(upstream),
          "x-mirror-revision": revision,
          "content-length": EMPTY,
        };
  if (credential !== null) headers["x-mirror-credential"] = credential;
  return Object.freeze(headers);
}

/** The last generation a `Uint32Array` cell holds; after it, the answers start over. */
const MAX_GENERATION = 2 ** 32 - 1;

/** How many slots a Snapshot's App table has room for (its chunks, the last one counted whole). */
function appCount(snapshot: RouteView): number {
  return snapshot.apps.chunks.length * CHUNK_SIZE;
}

/** An answer that never changes, built once. */
function fixed(
  reason: "not-synced" | "bad-host" | "unknown-host" | "routed-request",
  extra: OutgoingHttpHeaders,
): RouteAnswer {
  return Object.freeze({
    outcome: reason,
    status: ERRORS[reason].status,
    headers: Object.freeze({ ...extra, "x-mirror-reason": reason, "content-length": EMPTY }),
  });
}
