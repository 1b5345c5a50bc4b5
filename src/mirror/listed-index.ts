// A SecretIndex that also hands out its values as one array, kept from one call to the next:
// what the state keeper captures on every Snapshot published (SecretStore.present). Building
// the array anew took 2-3 ms of the publish turn at 100k Secrets; a change since now costs a
// copy of the array's pointers (once per capture, however many changes) and a search for the
// changed value's place. Each array handed out records what changed since the one before it, so
// that what changed between two captures costs what changed, not the Secrets held (`listChanges`).

import { SecretIndex } from "../snapshot/secret-index.ts";

/** One key's change between two arrays handed out in turn. */
interface ListChange<V> {
  readonly namespace: string;
  readonly name: string;
  /** Its value in the later array; undefined: not in it. */
  readonly value: V | undefined;
  /** Whether the earlier array held it. */
  readonly had: boolean;
}

/** What changed since the array handed out before; null past the chain's last kept step. */
interface ListRecord {
  previous: ListRecord | null;
  readonly changes: readonly ListChange<unknown>[];
}

/** Records kept behind the newest: a capture further back is compared whole. */
const MAX_STEPS = 32;

/** Each array handed out, by the record of its changes; nothing keeps an array alive. */
const records = new WeakMap<readonly unknown[], ListRecord>();

/** A SecretIndex whose values `list()` returns without building an array while nothing changed. */
export class ListedIndex<V> extends SecretIndex<V> {
  /** The values in the order `list` gives them; null: not asked for, or to be built again. */
  #list: V[] | null = null;
  /** `#list` was handed out since it last changed: a change copies it first. */
  #shared = false;
  /** The array last handed out, and the newest records, oldest first. */
  #handedOut: readonly V[] | null = null;
  readonly #recent: ListRecord[] = [];
  /** What changed since `#handedOut`, in order. */
  #pending: ListChange<V>[] = [];

  override set(namespace: string, name: string, value: V): this {
    // Nothing to keep up before the first list(): an initial list of 100k costs no lookup more.
    if (this.#handedOut === null) return super.set(namespace, name, value);
    const before = this.get(namespace, name);
    super.set(namespace, name, value);
    this.#changed(namespace, name, before, value);
    return this;
  }

  override delete(namespace: string, name: string): boolean {
    if (this.#handedOut === null) return super.delete(namespace, name);
    const before = this.get(namespace, name);
    const deleted = super.delete(namespace, name);
    if (deleted) this.#changed(namespace, name, before, undefined);
    return deleted;
  }

  /**
   * Every value, each once. Contract: the same array while nothing changed; never changed after
   * it was returned (a later change works on a copy). A value replaced keeps its place; a new one
   * goes last. Not in `values()`'s order once something was added or removed.
   */
  list(): readonly V[] {
    this.#list ??= this.values();
    const list = this.#list;
    this.#shared = true;
    if (list !== this.#handedOut) this.#record(list);
    return list;
  }

  #record(list: readonly V[]): void {
    const record: ListRecord = { previous: this.#recent.at(-1) ?? null, changes: this.#pending };
    records.set(list, record);
    this.#handedOut = list;
    this.#pending = [];
    this.#recent.push(record);
    if (this.#recent.length > MAX_STEPS) this.#recent.shift()!.previous = null;
  }

  #changed(namespace: string, name: string, before: V | undefined, after: V | undefined): void {
    if (before === after) return;
    this.#pending.push({ namespace, name, value: after, had: before !== undefined });
    let list = this.#list;
    if (list === null) return;
    if (this.#shared) {
      list = list.slice();
      this.#list = list;
      this.#shared = false;
    }
    if (before === undefined) {
      if (after !== undefined) list.push(after);
      return;
    }
    const at = list.indexOf(before);
    if (at < 0) this.#list = null;
    else if (after === undefined) list.splice(at, 1);
    else list[at] = after;
  }
}

/** What is in one array of a ListedIndex and not in an earlier one, by key. */
export interface ListChanges<V> {
  /** Values new or replaced, each once. */
  readonly set: readonly V[];
  /** Keys held before and not after. */
  readonly removed: readonly { readonly namespace: string; readonly name: string }[];
}

/**
 * What changed from `from` to `to`, two arrays one ListedIndex handed out, `from` first, found
 * from their records in proportion to the changes; null when the records do not link them (not
 * one index's, `to` not later, or more than MAX_STEPS captures apart): compare them whole.
 */
export function listChanges<V>(from: readonly V[], to: readonly V[]): ListChanges<V> | null {
  if (from === to) return { set: [], removed: [] };
  const target = records.get(from);
  const steps: ListRecord[] = [];
  for (let r = records.get(to) ?? null; r !== target; r = r.previous) {
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
