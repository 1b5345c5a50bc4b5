/**
 * The set of open watches: fans each store event out to every stream (the event's lines are
 * serialised once, in StoreEvent), ticks bookmarks, and is what the watch faults act on.
 */
import type { ServerResponse } from "node:http";
import { garbageBytes, seededRandom } from "./chunking.ts";
import type { FaultSettings, FaultTargets, GarbageKind } from "./faults.ts";
import { FlushScheduler } from "./flush.ts";
import type { Predicate } from "./selectors.ts";
import type { EnvtestState } from "./store.ts";
import { type EventEncoder, WatchStream } from "./watch.ts";

/** Quiet time earned per socket written in a flush pass, and its cap (see FlushScheduler). */
const FLUSH_MS_PER_STREAM = 0.25;
const FLUSH_MAX_DELAY_MS = 25;

/** The open watches. Contract: every stream sees every commit after it opened, in commit order. */
export class WatchHub implements FaultTargets {
  readonly #state: EnvtestState;
  readonly #settings: FaultSettings;
  readonly #streams = new Set<WatchStream>();
  readonly #unsubscribe: () => void;
  readonly #ticker: NodeJS.Timeout;
  readonly #flushes: FlushScheduler;
  #opened = 0;
  #garbageCount = 0;

  constructor(state: EnvtestState, settings: FaultSettings, bookmarkIntervalMs: number) {
    this.#state = state;
    this.#settings = settings;
    this.#flushes = new FlushScheduler(FLUSH_MS_PER_STREAM, FLUSH_MAX_DELAY_MS);
    this.#unsubscribe = state.subscribe((e) => {
      for (const s of this.#streams) s.offer(e);
    });
    this.#ticker = setInterval(() => {
      const rv = state.resourceVersion;
      for (const s of this.#streams) s.bookmark(rv);
    }, bookmarkIntervalMs);
    this.#ticker.unref();
  }

  /** How many watches are open. */
  get size(): number {
    return this.#streams.size;
  }

  /**
   * Registers a stream for `res`. The caller queues its initial lines before returning to the event
   * loop, so no commit can fall between them and live events.
   */
  open(
    res: ServerResponse,
    matches: Predicate,
    bookmarks: boolean,
    encode: EventEncoder,
  ): WatchStream {
    const stream = new WatchStream({
      res,
      encode,
      matches,
      bookmarks,
      faults: this.#settings,
      random: seededRandom(this.#settings.chunkingSeed + this.#opened++),
      schedule: (flush) => this.#flushes.request(flush),
      onClose: (s) => this.#streams.delete(s),
    });
    this.#streams.add(stream);
    return stream;
  }

  dropAll(): number {
    const n = this.#streams.size;
    for (const s of [...this.#streams]) s.destroy();
    this.#streams.clear();
    return n;
  }

  endAll(): number {
    const n = this.#streams.size;
    for (const s of this.#streams) s.end();
    return n;
  }

  release(): void {
    for (const s of this.#streams) s.kick();
  }

  injectGarbage(kind: GarbageKind): number {
    const random = seededRandom(this.#settings.chunkingSeed * 7919 + this.#garbageCount++);
    const line = (): Buffer => {
      switch (kind) {
        case "bytes":
          return Buffer.concat([garbageBytes(24, random), Buffer.from("\n")]);
        case "non-json":
          return Buffer.from("this is not JSON\n");
        case "truncated": {
          const full = `{"type":"MODIFIED","object":{"kind":"Secret","apiVersion":"v1","metadata":{"name":"truncated","namespace":"default","resourceVersion":"${this.#state.resourceVersion}"}}}`;
          return Buffer.from(`${full.slice(0, Math.floor(full.length / 2))}\n`);
        }
      }
    };
    for (const s of this.#streams) s.push(line());
    return this.#streams.size;
  }

  compact(): void {
    this.#state.compact();
  }

  /** Stops listening to the store and destroys every stream. */
  close(): void {
    this.#unsubscribe();
    clearInterval(this.#ticker);
    this.dropAll();
  }
}
