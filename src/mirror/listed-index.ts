// A SecretIndex that also hands out its values as one array, kept from one call to the next:
// what the state keeper captures on every Snapshot published (SecretStore.present). Building
// the array anew took 2-3 ms of the publish turn at 100k Secrets; a change since now costs a
// copy of the array's pointers (once per capture, however many changes) and a search for the
// changed value's place.

import { SecretIndex } from "../snapshot/secret-index.ts";

/** A SecretIndex whose values `list()` returns without building an array while nothing changed. */
export class ListedIndex<V> extends SecretIndex<V> {
  /** The values in the order `list` gives them; null: not asked for, or to be built again. */
  #list: V[] | null = null;
  /** `#list` was handed out since it last changed: a change copies it first. */
  #shared = false;

  override set(namespace: string, name: string, value: V): this {
    // Nothing to keep up before the first list(): an initial list of 100k costs no lookup more.
    if (this.#list === null) return super.set(namespace, name, value);
    const before = this.get(namespace, name);
    super.set(namespace, name, value);
    this.#changed(before, value);
    return this;
  }

  override delete(namespace: string, name: string): boolean {
    if (this.#list === null) return super.delete(namespace, name);
    const before = this.get(namespace, name);
    const deleted = super.delete(namespace, name);
    if (deleted) this.#changed(before, undefined);
    return deleted;
  }

  /**
   * Every value, each once. Contract: the same array while nothing changed; never changed after
   * it was returned (a later change works on a copy). A value replaced keeps its place; a new one
   * goes last. Not in `values()`'s order once something was added or removed.
   */
  list(): readonly V[] {
    this.#list ??= this.values();
    this.#shared = true;
    return this.#list;
  }

  #changed(before: V | undefined, after: V | undefined): void {
    if (before === after) return;
    let list = this.#list!;
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
