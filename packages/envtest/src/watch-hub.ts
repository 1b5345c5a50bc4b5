/**
 * The set of open watches: fans each store event out to every watch (the event's lines are
 * serialised once, in StoreEvent), ticks bookmarks, and is what the watch faults act on.
 */
import type { ServerResponse } from "node:http";
import { garbageBytes, seededRandom } from "./chunking.ts";
import type { FaultSettings, FaultTargets, GarbageKind } from "./faults.ts";
import { FlushScheduler } from "./flush.ts";
import type { RequestRecord } from "./request-log.ts";
import type { Predicate } from "./selectors.ts";
import type { EnvtestState } from "./store.ts";
import { type EventEncoder, WatchConnection, type WatchEncoding } from "./watch-connection.ts";

/** Quiet time earned per socket written in a flush pass, and its cap (see FlushScheduler). */
const FLUSH_MS_PER_WATCH = 0.25;
const FLUSH_MAX_DELAY_MS = 25;

/** The open watches. Contract: every watch sees every commit after it opened, in commit order. */
export class WatchHub implements FaultTargets {
  readonly #state: EnvtestState;
  readonly #settings: FaultSettings;
  readonly #watches = new Set<WatchConnection>();
  readonly #unsubscribe: () => void;
  readonly #ticker: NodeJS.Timeout;
  readonly #flushes: FlushScheduler;
  #opened = 0;
  #garbageCount = 0;

  constructor(state: EnvtestState, settings: FaultSettings, bookmarkIntervalMs: number) {
    this.#state = state;
    this.#settings = settings;
    this.#flushes = new FlushScheduler(FLUSH_MS_PER_WATCH, FLUSH_MAX_DELAY_MS);
    this.#unsubscribe = state.subscribe((e) => {
      for (const s of this.#watches) s.offer(e);
    });
    this.#ticker = setInterval(() => {
      const rv = state.resourceVersion;
      for (const s of this.#watches) s.bookmark(rv);
    }, bookmarkIntervalMs);
    this.#ticker.unref();
  }

  /** How many watches are open. */
  get size(): number {
    return this.#watches.size;
  }

  /**
   * Registers a watch connection for `res`. The caller queues its initial lines before returning to the event
   * loop, so no commit can fall between them and live events.
   */
  open(
    res: ServerResponse,
    record: RequestRecord,
    matches: Predicate,
    bookmarks: boolean,
    encode: EventEncoder,
    encoding: WatchEncoding = "json",
  ): WatchConnection {
    const watch = new WatchConnection({
      res,
      record,
      encode,
      encoding,
      matches,
      bookmarks,
      faults: this.#settings,
      random: seededRandom(this.#settings.chunkingSeed + this.#opened++),
      schedule: (flush) => this.#flushes.request(flush),
      onClose: (s) => this.#watches.delete(s),
    });
    this.#watches.add(watch);
    return watch;
  }

  /** Destroys every watch connection mid-stream; returns how many there were. */
  dropAll(): number {
    const n = this.#watches.size;
    for (const s of [...this.#watches]) s.destroy();
    this.#watches.clear();
    return n;
  }

  /** Ends every watch cleanly; returns how many there were. */
  endAll(): number {
    const n = this.#watches.size;
    for (const s of this.#watches) s.end();
    return n;
  }

  /** Restarts every pump (after an unstall or a chunking change). */
  release(): void {
    for (const s of this.#watches) s.kick();
  }

  /** Queues one bad line of `kind` into every watch; returns how many got it. */
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
    for (const s of this.#watches) s.push(line());
    return this.#watches.size;
  }

  /** Discards the store's event history. */
  compact(): void {
    this.#state.compact();
  }

  /** Stops listening to the store and destroys every watch connection. */
  close(): void {
    this.#unsubscribe();
    clearInterval(this.#ticker);
    this.dropAll();
  }
}
