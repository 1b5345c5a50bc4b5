import type { Clock } from "../clock.ts";

/** How often the data thread beats. */
export const HEARTBEAT_INTERVAL_MS = 1_000;
/**
 * How long the beats may stand still before the data thread counts as not answering: several
 * beats, far longer than any turn of its event loop (a view of 100k Apps applies in well under
 * a second).
 */
export const HEARTBEAT_STALE_MS = 5_000;

/**
 * The data thread's sign of life, in memory both threads share: the data thread adds one to a
 * cell from a timer of its event loop, so the cell stands still when that loop stops turning
 * (blocked, or the thread gone) even though the process still runs.
 */
export class Heartbeat {
  readonly buffer: SharedArrayBuffer;
  readonly #cell: Int32Array;

  /** A heartbeat over `buffer` (another thread's), or over new memory. */
  constructor(buffer = new SharedArrayBuffer(4)) {
    this.buffer = buffer;
    this.#cell = new Int32Array(buffer);
  }

  /** Counts one beat. */
  beat(): void {
    Atomics.add(this.#cell, 0, 1);
  }

  /** The beats so far (wrapping at 2^32; only a change matters). */
  count(): number {
    return Atomics.load(this.#cell, 0);
  }
}

/**
 * Whether the beats of `count` moved within the last `staleMs`, judged each time it is asked:
 * no timer of its own, so the main thread stays asleep between probes. A thread that stopped just
 * after one call is found out by the first call more than `staleMs` after the last change seen.
 */
export function heartbeatMonitor(
  count: () => number,
  clock: Clock,
  staleMs = HEARTBEAT_STALE_MS,
): () => boolean {
  let seen = count();
  let changedAt = clock.now();
  return () => {
    const now = clock.now();
    const current = count();
    if (current !== seen) {
      seen = current;
      changedAt = now;
      return true;
    }
    return now - changedAt < staleMs;
  };
}
