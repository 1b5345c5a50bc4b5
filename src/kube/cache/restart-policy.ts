// How the reflector restarts after a watch ends: resume, relist, and how long to wait first.

import { Backoff, type BackoffPolicy } from "./backoff.ts";
import type { ApiError, ApiStatus, WatchStreamError } from "./list-watch.ts";
import type { RelistReason, WatchRestartReason } from "./reflector-status.ts";

/** How one watch ended. */
export interface WatchOutcome {
  readonly reason: WatchRestartReason;
  /** Events and bookmarks delivered, and how long the watch lived. */
  readonly events: number;
  readonly elapsedMs: number;
  readonly relist?: RelistReason;
  readonly error?: ApiError | WatchStreamError;
  /** A failure: the restart backs off, honouring retryAfterMs. */
  readonly backoff?: boolean;
  readonly retryAfterMs?: number;
}

/** What to do next: relist or resume, after delayMs. */
interface RestartDecision {
  readonly relist?: RelistReason;
  readonly delayMs: number;
}

/** A watch ending sooner than this with no events is suspicious: repeated, it backs off. */
const QUICK_END_MS = 1_000;
/** Decode failures in a row after which the stream is not trusted and the reflector relists. */
const DECODE_RELIST_AFTER = 3;
/** A longer Retry-After is cut to this: a misconfigured proxy cannot park the mirror for hours. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

export const isGone = (e: ApiError): boolean => e.kind === "http" && e.status === 410;

/**
 * A list at a resourceVersion the server cannot serve: 410 Expired, or a version newer than its
 * watch cache has reached ("Too large resource version", as client-go recognises it).
 */
export function isUnservableVersion(e: ApiError): boolean {
  return isGone(e) || (e.kind === "http" && e.message.includes("Too large resource version"));
}

/**
 * The delay the server asked for, in ms (0 when none), capped at MAX_RETRY_AFTER_MS: a 429's
 * Retry-After, or a 5xx's (an API server answers 503 with one while it starts), as client-go's
 * REST client honours them.
 */
export function retryAfterMs(e: ApiError | WatchStreamError | null): number {
  if (e === null) return 0;
  if (e.kind !== "http" || e.retryAfterSeconds === undefined) return 0;
  if (e.status !== 429 && e.status < 500) return 0;
  return Math.min(e.retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS);
}

/** An ERROR event's Status as the ApiError an HTTP response with that code would give. */
export const statusError = (s: ApiStatus): ApiError => ({
  kind: "http",
  status: s.code,
  message: s.message ?? `watch ERROR event with code ${s.code}`,
  ...(s.reason === undefined ? {} : { reason: s.reason }),
  ...(s.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: s.retryAfterSeconds }),
});

/** A watch whose response headers did not come before the inactivity deadline. */
export const NO_HEADERS = {
  reason: "inactive",
  error: { kind: "network", message: "no response headers before the deadline" },
  backoff: true,
} as const;

/** A failed watch request or an ERROR event: 410 relists, anything else backs off. */
export function watchFailed(error: ApiError): Omit<WatchOutcome, "events" | "elapsedMs"> {
  if (isGone(error)) return { reason: "expired", relist: "expired" };
  const reason = error.kind === "http" && error.status === 429 ? "throttled" : "error";
  return { reason, error, backoff: true, retryAfterMs: retryAfterMs(error) };
}

/** How restarts are paced, besides the backoff. */
export interface RestartPacing {
  /**
   * A relist after 410 Expired waits a random delay in [0, this): when an API server restart
   * loses the watch history, every replica of a fleet gets its 410 in the same second, and this
   * spreads their relists out. It is short because it adds to every replica's staleness, and a
   * server that cannot take the relists says so with a Retry-After, which paces them instead
   * (ADR 61).
   */
  readonly relistSpreadMs: number;
}

export const DEFAULT_PACING: RestartPacing = { relistSpreadMs: 5_000 };

/**
 * Turns watch outcomes and list failures into decisions. Failures back off, except that a
 * server's Retry-After (a 429, or a 5xx that names one) is honoured exactly (ADR 17): the retry
 * waits that long, no longer and no sooner, and the backoff neither applies nor grows, so
 * earlier unrelated failures never delay recovery from throttling. Ends that come fast and empty (a
 * server closing at once, a 410 right after a list) are free once, then back off too; a 410 on a
 * later resume is no failure, and its relist never waits a backoff. A
 * malformed line resumes at once the first time, backs off when it happens again in a row, and
 * the DECODE_RELIST_AFTER-th in a row relists (after the backoff). A relist after 410 Expired
 * waits a random part of the relist spread, unless the server has paced this reflector with a
 * Retry-After since it last served it (a complete list, a watch that delivered something): it is
 * then the server that spreads the fleet out, and the spread would only add to its wait (ADR 61).
 */
export class RestartPolicy {
  readonly #backoff: Backoff;
  readonly #pacing: RestartPacing;
  readonly #random: () => number;
  #quickEnds = 0;
  #decodeStreak = 0;
  /** A Retry-After was honoured since the server last served this reflector. */
  #paced = false;
  /** No watch has ended since the last complete list. */
  #fresh = false;

  constructor(policy: BackoffPolicy, random: () => number, pacing: RestartPacing = DEFAULT_PACING) {
    this.#backoff = new Backoff(policy, random);
    this.#pacing = pacing;
    this.#random = random;
  }

  /** Records a successful request (a list, a watch opened). */
  healthy(now: number): void {
    this.#backoff.markHealthy(now);
  }

  /** Records a complete list: the server's pacing, if any, is over. */
  listed(now: number): void {
    this.#paced = false;
    this.#fresh = true;
    this.healthy(now);
  }

  /** The delay before retrying a failed list, paged or streamed. */
  afterListFailure(now: number, error: ApiError | WatchStreamError): number {
    const asked = retryAfterMs(error);
    if (asked > 0) this.#paced = true;
    return asked > 0 ? asked : this.#backoff.next(now);
  }

  /** The delay after an unexpected exception in the loop. */
  afterBug(now: number): number {
    return this.#backoff.next(now);
  }

  /** What follows a watch that ended with outcome. */
  afterWatch(now: number, outcome: WatchOutcome): RestartDecision {
    // A watch that delivered something was served: any pacing by the server is over.
    if (outcome.events > 0) this.#paced = false;
    const fresh = this.#fresh;
    this.#fresh = false;
    this.#decodeStreak = outcome.reason === "decode" ? this.#decodeStreak + 1 : 0;
    let relist = outcome.relist;
    if (this.#decodeStreak >= DECODE_RELIST_AFTER) {
      relist = "decode";
      this.#decodeStreak = 0;
    }
    let delayMs = 0;
    if (outcome.retryAfterMs !== undefined && outcome.retryAfterMs > 0) {
      delayMs = outcome.retryAfterMs;
      this.#paced = true;
    } else if (outcome.backoff || this.#decodeStreak >= 2 || relist === "decode") {
      delayMs = this.#backoff.next(now);
    } else if (relist === "expired" && !fresh) {
      // A resume the server can no longer serve (it lost the history: a restart). Relisting is
      // the cure, not a retry to pace: it never waits a backoff that an outage grew (ADR 61).
      this.#quickEnds = 0;
    } else if (outcome.events > 0 || outcome.elapsedMs >= QUICK_END_MS) {
      this.#quickEnds = 0;
    } else {
      this.#quickEnds += 1;
      if (this.#quickEnds >= 2) delayMs = this.#backoff.next(now);
    }
    if (relist === "expired" && !this.#paced)
      delayMs = Math.max(delayMs, this.#random() * this.#pacing.relistSpreadMs);
    return relist === undefined ? { delayMs } : { relist, delayMs };
  }
}
