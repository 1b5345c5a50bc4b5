// Exponential backoff with jitter, after client-go's wait.Backoff as the reflector uses it
// (800 ms initial, factor 2, 30 s cap, jitter 1.0, reset after a healthy period), with one
// change: the cap bounds the jittered delay, so it is the real maximum and replicas restarted
// together still spread out at the cap instead of all retrying at exactly 30 s.

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly factor: number;
  /** No delay is ever longer than this. */
  readonly capMs: number;
  /** A delay is base * (1 + jitter * random()), random() in [0, 1). */
  readonly jitter: number;
  /** After this long without a failure since the last healthy mark, the next failure starts over. */
  readonly resetAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialMs: 800,
  factor: 2,
  capMs: 30_000,
  jitter: 1,
  resetAfterMs: 120_000,
};

/** The delay for the failure at index attempt (0-based), before any Retry-After. */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: number): number {
  const baseCap = policy.capMs / (1 + policy.jitter);
  const base = Math.min(policy.initialMs * policy.factor ** attempt, baseCap);
  return Math.min(base * (1 + policy.jitter * random), policy.capMs);
}

/**
 * Failure-driven backoff state. next() is called once per failure and grows the delay;
 * markHealthy() records that things work again, and a failure that comes resetAfterMs or
 * more after the first healthy mark starts again from the initial delay.
 */
export class Backoff {
  readonly #policy: BackoffPolicy;
  readonly #random: () => number;
  #attempt = 0;
  #healthySince: number | undefined;

  constructor(policy: BackoffPolicy, random: () => number) {
    this.#policy = policy;
    this.#random = random;
  }

  /** The delay before retrying after a failure at time now. */
  next(now: number): number {
    if (this.#healthySince !== undefined && now - this.#healthySince >= this.#policy.resetAfterMs) {
      this.#attempt = 0;
    }
    this.#healthySince = undefined;
    const delay = backoffDelay(this.#policy, this.#attempt, this.#random());
    this.#attempt += 1;
    return delay;
  }

  /** Records that a request succeeded at time now; only the first mark after a failure counts. */
  markHealthy(now: number): void {
    this.#healthySince ??= now;
  }
}
