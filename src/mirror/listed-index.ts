// A SecretIndex that also hands out its values, kept from one call to the next: what the state
// keeper captures on every Snapshot published (SecretStore.present). Building an array anew took
// 2-3 ms of the publish turn at 100k Secrets; a change since costs a copy of one chunk of the
// capture and of its directory, and a search for the changed value's place. Each capture records
// what changed since the one before it, so that what changed between two captures costs what
// changed, not the Secrets held (`listChanges`).

import { SecretIndex } from "../snapshot/secret-index.ts";

/** One key's change between two captures handed out in turn. */
interface ListChange<V> {
  readonly namespace: string;
  readonly name: string;
  /** Its value in the later capture; undefined: not in it. */
  readonly value: V | undefined;
  /** Whether the earlier capture held it. */
  readonly had: boolean;
}

/** What changed since the capture handed out before; null past the chain's last kept step. */
interface ListRecord {
  previous: ListRecord | null;
  readonly changes: readonly ListChange<unknown>[];
}

/** Records kept behind the newest: a capture further back is compared whole. */
const MAX_STEPS = 32;

/** Each capture handed out, by the record of its changes; nothing keeps a capture alive. */
const records = new WeakMap<ListCapture<unknown>, ListRecord>();

/** Values a capture holds per chunk: a change copies one chunk and the directory of chunks. */
const CHUNK = 1_024;

/**
 * The values of a ListedIndex at one moment, in chunks never changed once handed out. At 100k
 * Secrets a flat array copied on the first change after each capture was 0.44 ms a change (p50,
 * 12-07), where a chunk and a directory of 98 are microseconds.
 */
export class ListCapture<V> implements Iterable<V> {
  readonly #chunks: readonly (readonly V[])[];
  readonly length: number;

  constructor(chunks: readonly (readonly V[])[], length: number) {
    this.#chunks = chunks;
    this.length = length;
  }

  *[Symbol.iterator](): Iterator<V> {
    for (const chunk of this.#chunks) yield* chunk;
  }

  /** Every value in one new array: for a walk of them all (a state file's base). */
  toArray(): V[] {
    // concat: a sixth of flat()'s time for 100k values in 98 chunks.
    return ([] as V[]).concat(...this.#chunks);
  }
}

/** The values of an array or a capture as an array: the array itself, or the capture's copy. */
export function listArray<V>(list: readonly V[] | ListCapture<V>): readonly V[] {
  return list instanceof ListCapture ? list.toArray() : list;
}

/** A SecretIndex whose values `list()` returns without copying them while nothing changed. */
export class ListedIndex<V> extends SecretIndex<V> {
  readonly #chunk: number;
  /** The values in `list`'s order, by chunk; null: not asked for yet. */
  #chunks: V[][] | null = null;
  /** Chunks and directory made since the last capture, changed in place until the next. */
  readonly #owned = new Set<V[]>();
  #ownsDirectory = true;
  /** The capture last handed out, and the newest records, oldest first. */
  #handedOut: ListCapture<V> | null = null;
  readonly #recent: ListRecord[] = [];
  /** What changed since `#handedOut`, in order. */
  #pending: ListChange<V>[] = [];

  /** `chunk`: values per chunk of a capture (tests make it small). */
  constructor(chunk: number = CHUNK) {
    super();
    this.#chunk = chunk;
  }

  override set(namespace: string, name: string, value: V): this {
    // Nothing to keep up before the first list(): an initial list of 100k costs no lookup more.
    if (this.#chunks === null) return super.set(namespace, name, value);
    const before = this.get(namespace, name);
    super.set(namespace, name, value);
    this.#changed(namespace, name, before, value);
    return this;
  }

  override delete(namespace: string, name: string): boolean {
    if (this.#chunks === null) return super.delete(namespace, name);
    const before = this.get(namespace, name);
    const deleted = super.delete(namespace, name);
    if (deleted) this.#changed(namespace, name, before, undefined);
    return deleted;
  }

  /**
   * Every value, each once. Contract: the same capture while nothing changed. A value replaced
   * keeps its place; a new one goes last. Not in `values()`'s order once something was added or
   * removed.
   */
  list(): ListCapture<V> {
    if (this.#chunks === null) {
      const values = this.values();
      this.#chunks = [];
      for (let at = 0; at < values.length; at += this.#chunk)
        this.#chunks.push(values.slice(at, at + this.#chunk));
    } else if (this.#handedOut !== null && this.#pending.length === 0) return this.#handedOut;
    const capture = new ListCapture<V>(this.#chunks, this.size);
    this.#owned.clear();
    this.#ownsDirectory = false;
    this.#record(capture);
    return capture;
  }

  #record(capture: ListCapture<V>): void {
    const record: ListRecord = { previous: this.#recent.at(-1) ?? null, changes: this.#pending };
    records.set(capture, record);
    this.#handedOut = capture;
    this.#pending = [];
    this.#recent.push(record);
    if (this.#recent.length > MAX_STEPS) this.#recent.shift()!.previous = null;
  }

  #changed(namespace: string, name: string, before: V | undefined, after: V | undefined): void {
    if (before === after) return;
    this.#pending.push({ namespace, name, value: after, had: before !== undefined });
    if (!this.#ownsDirectory) {
      this.#chunks = [...this.#chunks!];
      this.#ownsDirectory = true;
    }
    const chunks = this.#chunks!;
    if (before === undefined) {
      if ((chunks.at(-1)?.length ?? this.#chunk) < this.#chunk)
        this.#own(chunks, chunks.length - 1).push(after!);
      else {
        const fresh = [after!];
        chunks.push(fresh);
        this.#owned.add(fresh);
      }
      return;
    }
    const c = chunks.findIndex((chunk) => chunk.includes(before));
    if (c < 0) throw new Error("a value the index holds is missing from its list");
    const chunk = this.#own(chunks, c);
    const at = chunk.indexOf(before);
    if (after !== undefined) chunk[at] = after;
    else if (chunk.length > 1) chunk.splice(at, 1);
    else chunks.splice(c, 1);
  }

  /** Chunk `c` of `chunks`, copied first unless made since the last capture. */
  #own(chunks: V[][], c: number): V[] {
    if (this.#owned.has(chunks[c]!)) return chunks[c]!;
    const chunk = [...chunks[c]!];
    chunks[c] = chunk;
    this.#owned.add(chunk);
    return chunk;
  }
}

/** What is in one capture of a ListedIndex and not in an earlier one, by key. */
export interface ListChanges<V> {
  /** Values new or replaced, each once. */
  readonly set: readonly V[];
  /** Keys held before and not after. */
  readonly removed: readonly { readonly namespace: string; readonly name: string }[];
}

/**
 * What changed from `from` to `to`, two captures one ListedIndex handed out, `from` first, found
 * from their records in proportion to the changes; null when the records do not link them (not
 * one index's, `to` not later, or more than MAX_STEPS captures apart): compare them whole.
 */
export function listChanges<V>(from: Iterable<V>, to: Iterable<V>): ListChanges<V> | null {
  if (!(from instanceof ListCapture && to instanceof ListCapture)) return null;
  if (from === to) return { set: [], removed: [] };
  const target = records.get(from as ListCapture<unknown>);
  const steps: ListRecord[] = [];
  for (let r = records.get(to as ListCapture<unknown>) ?? null; r !== target; r = r.previous) {
    if (r === null || target === undefined) return null;
    steps.push(r);
  }
  // Oldest first: a key's first change says whether `from` held it; its last, what `to` holds.
  const seen = new SecretIndex<{ readonly had: boolean; value: V | undefined }>();
  for (let i = steps.length - 1; i >= 0; i--) {
    for (const c of steps[i]!.changes as readonly ListChange<V>[]) {
      const known = seen.get(c.namespace, c.name);
      if (known === undefined) seen.set(c.namespace, c.name, { had: c.had, value: c.value });
      else known.value = c.value;
    }
  }
  const set: V[] = [];
  const removed: { namespace: string; name: string }[] = [];
  for (const [namespace, name, { had, value }] of seen.entries()) {
    if (value !== undefined) set.push(value);
    else if (had) removed.push({ namespace, name });
  }
  return { set, removed };
}
