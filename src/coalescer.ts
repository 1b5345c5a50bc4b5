// The one buffered-one scheduler: the mirror's adoption and rebuild stages, and each pusher.

/** Runs a callback now or on a later turn; injected so tests decide when a scheduled run starts. */
export type Schedule = (run: () => void) => void;

/** Starts a run at once, in the signal's own turn. */
export const AT_ONCE: Schedule = (run) => run();

/** Runs on a later turn of the event loop, after the I/O already read (the default). */
export const NEXT_TURN: Schedule = (run) => setImmediate(run);

interface CoalescerOptions {
  /** The work (a rebuild, a push). Never runs twice at once. */
  readonly run: () => void | Promise<void>;
  /** A run that threw: reported, and the loop keeps going. */
  readonly onError: (error: unknown) => void;
  /** Defaults to `setImmediate`, so a burst of events read from one chunk costs one run. */
  readonly schedule?: Schedule;
  /** Told, as a run starts, how many signals beyond the one that asked for it it absorbs. */
  readonly onCoalesced?: (count: number) => void;
}

/**
 * A buffered-one signal: while a run is scheduled or running, any number of signals leave
 * exactly one follow-up run queued. No signal is lost (the follow-up starts after the last
 * signal) and no two runs overlap.
 */
export class Coalescer {
  readonly #run: () => void | Promise<void>;
  readonly #onError: (error: unknown) => void;
  readonly #schedule: Schedule;
  readonly #onCoalesced: (count: number) => void;
  #state: "idle" | "scheduled" | "running" = "idle";
  #pending = false;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();
  #signals = 0;
  #runs = 0;
  /** Signals the next run will answer. */
  #waiting = 0;

  constructor(options: CoalescerOptions) {
    this.#run = options.run;
    this.#onError = options.onError;
    this.#schedule = options.schedule ?? NEXT_TURN;
    this.#onCoalesced = options.onCoalesced ?? (() => {});
  }

  /** Asks for a run that starts after this call (or in it, `AT_ONCE`). Cheap and synchronous. */
  signal(): void {
    if (this.#stopped) return;
    this.#signals++;
    this.#waiting++;
    if (this.#state === "idle") {
      this.#state = "scheduled";
      this.#loop = new Promise((resolve) => this.#schedule(() => resolve(this.#drain())));
    } else if (this.#state === "running") {
      this.#pending = true;
    }
  }

  async #drain(): Promise<void> {
    this.#state = "running";
    do {
      this.#pending = false;
      if (this.#stopped) break;
      this.#runs++;
      const absorbed = this.#waiting - 1;
      this.#waiting = 0;
      try {
        if (absorbed > 0) this.#onCoalesced(absorbed);
        await this.#run();
      } catch (error) {
        this.#onError(error);
      }
    } while (this.#pending);
    this.#state = "idle";
  }

  /** True while a run is scheduled or running. */
  get busy(): boolean {
    return this.#state !== "idle";
  }

  /** Signals received, runs started, and signals absorbed by another signal's run. */
  stats(): { signals: number; runs: number; coalesced: number } {
    return { signals: this.#signals, runs: this.#runs, coalesced: this.#signals - this.#runs };
  }

  /** Resolves when no run is scheduled or running. */
  async idle(): Promise<void> {
    while (this.#state !== "idle") await this.#loop;
  }

  /** Refuses further signals, drops a queued follow-up, and waits for the run in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.idle();
  }
}
