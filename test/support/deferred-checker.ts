// A Registry checker whose checks land when a test says: what the check thread's round trip looks
// like to the tracker and the mirror (ADR 88), in the test's own order.

import type { RegistryChecker, ValueCheck } from "../../src/mirror/registry-checker.ts";
import { checkValue } from "../../src/mirror/registry-checker.ts";
import type { CheckedUnder } from "../../src/registry/rules.ts";

interface Asked {
  readonly value: string;
  readonly under: CheckedUnder;
  readonly resolve: (check: ValueCheck) => void;
}

export class DeferredChecker implements RegistryChecker {
  /** The values asked for, in order, each by `label` (default: the value itself). */
  readonly asked: string[] = [];
  readonly #waiting: Asked[] = [];
  readonly #label: (value: string) => string;

  constructor(label: (value: string) => string = (v) => v) {
    this.#label = label;
  }

  check(value: string, under: CheckedUnder): Promise<ValueCheck> {
    this.asked.push(this.#label(value));
    const { promise, resolve } = Promise.withResolvers<ValueCheck>();
    this.#waiting.push({ value, under, resolve });
    return promise;
  }

  /** Labels of the checks asked for and not landed yet, in order. */
  get waiting(): string[] {
    return this.#waiting.map((w) => this.#label(w.value));
  }

  /**
   * Lands the oldest check waiting (the thread answers in order), as the inline check makes it,
   * once one is asked for (the tracker asks a few microtasks after `serve`).
   */
  async land(): Promise<void> {
    for (let turns = 0; this.#waiting.length === 0; turns++) {
      if (turns === 100) throw new Error("no check is waiting");
      await new Promise(setImmediate);
    }
    const next = this.#waiting.shift()!;
    next.resolve(checkValue(next.value, next.under));
  }
}
