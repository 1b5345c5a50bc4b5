/**
 * Store events and the bounded history of them that watch resumes and paged lists read from, as the
 * watch cache and etcd's compaction window do.
 */
import { type SecretJSON, type StoredSecret, withResourceVersion } from "./secret.ts";

/** The event types a commit produces (BOOKMARK and ERROR exist only on the wire). */
export type EventType = "ADDED" | "MODIFIED" | "DELETED";

/**
 * One committed write. Its wire lines are serialised at most once per variant, whatever the number
 * of watchers.
 */
export class StoreEvent {
  readonly type: EventType;
  readonly rv: number;
  readonly key: string;
  /** The object after the write; undefined for DELETED. */
  readonly current: StoredSecret | undefined;
  /** The object before the write; undefined for ADDED. */
  readonly prev: StoredSecret | undefined;
  readonly #lines: Partial<Record<EventType, Buffer>> = {};
  #other: Map<string, Buffer> | undefined;

  constructor(
    type: EventType,
    rv: number,
    key: string,
    current: StoredSecret | undefined,
    prev: StoredSecret | undefined,
  ) {
    this.type = type;
    this.rv = rv;
    this.key = key;
    this.current = current;
    this.prev = prev;
  }

  /**
   * The newline-terminated JSON line for this event seen as `as`: a watcher whose selector the
   * object enters sees ADDED, one it leaves sees DELETED carrying the previous content at this
   * event's resourceVersion, as the real watch cache sends.
   */
  line(as: EventType): Buffer {
    let l = this.#lines[as];
    if (l === undefined) {
      const json = as === "DELETED" ? this.#deletedJson() : (this.current?.json ?? "null");
      l = Buffer.from(`{"type":"${as}","object":${json}}\n`);
      this.#lines[as] = l;
    }
    return l;
  }

  /** A line in another encoding (a Table per event type), built at most once per key. */
  cached(key: string, build: () => Buffer): Buffer {
    this.#other ??= new Map();
    let l = this.#other.get(key);
    if (l === undefined) {
      l = build();
      this.#other.set(key, l);
    }
    return l;
  }

  /** The object a DELETED line carries, for tests and direct callers. */
  deletedObject(): SecretJSON | undefined {
    return this.prev === undefined ? undefined : withResourceVersion(this.prev.obj, this.rv);
  }

  #deletedJson(): string {
    const o = this.deletedObject();
    return o === undefined ? "null" : JSON.stringify(o);
  }
}

/** Resuming from `requested` is impossible: events after it were discarded up to `compactedRv`. */
export interface TooOld {
  readonly requested: number;
  readonly compactedRv: number;
}

/**
 * A fixed-capacity ring of the most recent events. Contract: a resume from resourceVersion N is
 * served iff N >= compactedRv, the highest resourceVersion whose successors may have been
 * discarded.
 */
export class EventHistory {
  readonly capacity: number;
  #ring: (StoreEvent | undefined)[];
  #start = 0;
  #size = 0;
  #compactedRv: number;

  constructor(capacity: number, compactedRv: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError("history capacity must be ≥ 1");
    this.capacity = capacity;
    this.#ring = new Array<StoreEvent | undefined>(capacity);
    this.#compactedRv = compactedRv;
  }

  /** The highest resourceVersion whose successors may have been discarded. */
  get compactedRv(): number {
    return this.#compactedRv;
  }

  /** How many events are retained. */
  get size(): number {
    return this.#size;
  }

  /** Retains `e`, discarding the oldest event when full. */
  push(e: StoreEvent): void {
    if (this.#size === this.capacity) {
      const evicted = this.#ring[this.#start];
      if (evicted !== undefined) this.#compactedRv = evicted.rv;
      this.#ring[this.#start] = e;
      this.#start = (this.#start + 1) % this.capacity;
      return;
    }
    this.#ring[(this.#start + this.#size) % this.capacity] = e;
    this.#size += 1;
  }

  /** Discards every retained event, as an etcd compaction at `currentRv` would. */
  compact(currentRv: number): void {
    this.#ring = new Array<StoreEvent | undefined>(this.capacity);
    this.#start = 0;
    this.#size = 0;
    this.#compactedRv = Math.max(this.#compactedRv, currentRv);
  }

  /** The events with resourceVersion > rv, oldest first, or why they are gone. */
  since(rv: number): { ok: true; events: StoreEvent[] } | { ok: false; tooOld: TooOld } {
    if (rv < this.#compactedRv)
      return { ok: false, tooOld: { requested: rv, compactedRv: this.#compactedRv } };
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#at(mid)?.rv ?? 0) <= rv) lo = mid + 1;
      else hi = mid;
    }
    const events: StoreEvent[] = [];
    for (let i = lo; i < this.#size; i++) {
      const e = this.#at(i);
      if (e !== undefined) events.push(e);
    }
    return { ok: true, events };
  }

  #at(i: number): StoreEvent | undefined {
    return this.#ring[(this.#start + i) % this.capacity];
  }
}
