// A manual clock: time moves only when a test says so, and promises settle between timers.

import type { Clock } from "../../src/clock.ts";

/** Lets every pending promise chain run to its next real wait. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 25; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** A Clock whose timers fire only through advance() or runNext(). */
export class FakeClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers = new Map<number, Timer>();

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const seq = ++this.#seq;
    this.#timers.set(seq, { at: this.#now + Math.max(0, ms), seq, fn });
    return () => {
      this.#timers.delete(seq);
    };
  }

  /** Remaining delay of each pending timer, soonest first. */
  pending(): number[] {
    return [...this.#timers.values()].map((t) => t.at - this.#now).sort((a, b) => a - b);
  }

  #earliest(): Timer | undefined {
    let first: Timer | undefined;
    for (const t of this.#timers.values()) {
      if (first === undefined || t.at < first.at || (t.at === first.at && t.seq < first.seq))
        first = t;
    }
    return first;
  }

  /** Moves time forward by ms, firing due timers in order and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (let t = this.#earliest(); t !== undefined && t.at <= target; t = this.#earliest()) {
      this.#timers.delete(t.seq);
      this.#now = t.at;
      t.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /** Jumps to the soonest timer and fires it; returns how far time moved (undefined if none). */
  async runNext(): Promise<number | undefined> {
    await settle();
    const t = this.#earliest();
    if (t === undefined) return undefined;
    const delay = t.at - this.#now;
    await this.advance(delay);
    return delay;
  }
}
