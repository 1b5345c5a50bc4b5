import { ROUTE_OUTCOMES, type RouteOutcome } from "../answers/reasons.ts";

const INDEX: Readonly<Record<RouteOutcome, number>> = Object.fromEntries(
  ROUTE_OUTCOMES.map((o, i) => [o, i]),
) as Record<RouteOutcome, number>;

/**
 * `/v1/route` answers by outcome, in memory both threads share: the data thread counts
 * what it answers, the main thread what Fastify answers, and `/metrics` reads the sum. A count is
 * one 32-bit cell, so `add` is one atomic add on the hot path; `totals` keeps its own running
 * totals and folds in the change since its last call, so a cell may wrap around as long as
 * `totals` is called at least once per 2^32 answers (the owner calls it every minute).
 */
export class RouteCounts {
  readonly buffer: SharedArrayBuffer;
  readonly #cells: Int32Array;
  readonly #seen: number[];
  readonly #totals: number[];

  /** Counts over `buffer` (another thread's), or over new memory. */
  constructor(buffer = new SharedArrayBuffer(ROUTE_OUTCOMES.length * 4)) {
    this.buffer = buffer;
    this.#cells = new Int32Array(buffer);
    this.#seen = ROUTE_OUTCOMES.map(() => 0);
    this.#totals = ROUTE_OUTCOMES.map(() => 0);
  }

  /** Counts one answer. */
  add(outcome: RouteOutcome): void {
    Atomics.add(this.#cells, INDEX[outcome], 1);
  }

  /** Every answer counted so far, by outcome. */
  totals(): Record<RouteOutcome, number> {
    const out = {} as Record<RouteOutcome, number>;
    ROUTE_OUTCOMES.forEach((outcome, i) => {
      const cell = Atomics.load(this.#cells, i) >>> 0;
      this.#totals[i]! += (cell - this.#seen[i]!) >>> 0;
      this.#seen[i] = cell;
      out[outcome] = this.#totals[i]!;
    });
    return out;
  }
}
