/**
 * Batches watch writes. Every stream with new lines is flushed in one pass, and a pass that wrote
 * to k sockets is followed by k × `perStreamMs` of quiet (capped at `maxDelayMs`) before the next
 * one. Socket writes are the dominant cost (one syscall each), so 100 busy watchers get their
 * events in a few large writes, while a test with one watcher sees no delay at all.
 */
export class FlushScheduler {
  readonly #perStreamMs: number;
  readonly #maxDelayMs: number;
  readonly #dirty = new Set<() => void>();
  #pending = false;
  #last = Number.NEGATIVE_INFINITY;
  #lastBatch = 0;

  constructor(perStreamMs: number, maxDelayMs: number) {
    this.#perStreamMs = perStreamMs;
    this.#maxDelayMs = maxDelayMs;
  }

  /** Runs `flush` in the next batch (once, however often it is requested before then). */
  request(flush: () => void): void {
    this.#dirty.add(flush);
    if (this.#pending) return;
    this.#pending = true;
    const quiet = Math.min(this.#maxDelayMs, this.#lastBatch * this.#perStreamMs);
    const wait = this.#last + quiet - performance.now();
    if (wait < 1) setImmediate(this.#run);
    else setTimeout(this.#run, wait);
  }

  readonly #run = (): void => {
    this.#pending = false;
    this.#last = performance.now();
    const batch = [...this.#dirty];
    this.#dirty.clear();
    this.#lastBatch = batch.length;
    for (const f of batch) f();
  };
}
