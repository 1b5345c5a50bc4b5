// A value that a vitest hook (`beforeAll`, `beforeEach`) sets and the tests of its suite read.

/** Holds what a hook set; reading it when no hook has set it is a mistake in the test, said so. */
export class HookSlot<T> {
  readonly #what: string;
  #value: T | undefined;

  /** `what` names the value in the error a read too early throws. */
  constructor(what: string) {
    this.#what = what;
  }

  set(value: T | undefined): void {
    this.#value = value;
  }

  /** The value the hook set; throws when it has not (yet) set one. */
  get value(): T {
    if (this.#value === undefined) throw new Error(`${this.#what} read before its hook ran`);
    return this.#value;
  }

  /** The value, or undefined: for the hooks that clean up after a setup that may have failed. */
  get current(): T | undefined {
    return this.#value;
  }
}
