/**
 * A map keyed by (namespace, name) without building a `namespace/name` string per access:
 * building 100k such strings is most of the cost of indexing a large Registry.
 */
export class SecretIndex<V> {
  readonly #byNamespace = new Map<string, Map<string, V>>();
  #size = 0;

  get(namespace: string, name: string): V | undefined {
    return this.#byNamespace.get(namespace)?.get(name);
  }

  has(namespace: string, name: string): boolean {
    return this.#byNamespace.get(namespace)?.has(name) ?? false;
  }

  set(namespace: string, name: string, value: V): this {
    let names = this.#byNamespace.get(namespace);
    if (names === undefined) {
      names = new Map();
      this.#byNamespace.set(namespace, names);
    }
    // The size tells whether the name was new: one hash-table operation instead of has + set.
    const before = names.size;
    names.set(name, value);
    this.#size += names.size - before;
    return this;
  }

  delete(namespace: string, name: string): boolean {
    const names = this.#byNamespace.get(namespace);
    if (names === undefined || !names.delete(name)) return false;
    this.#size--;
    if (names.size === 0) this.#byNamespace.delete(namespace);
    return true;
  }

  get size(): number {
    return this.#size;
  }

  *entries(): Generator<[namespace: string, name: string, value: V]> {
    for (const [namespace, names] of this.#byNamespace) {
      for (const [name, value] of names) yield [namespace, name, value];
    }
  }

  /** Every value, in the order `entries` gives them: no tuple per entry. */
  values(): V[] {
    const out: V[] = [];
    for (const names of this.#byNamespace.values())
      for (const value of names.values()) out.push(value);
    return out;
  }
}

/** Read-only view of a SecretIndex. */
export interface ReadonlySecretIndex<V> {
  get(namespace: string, name: string): V | undefined;
  has(namespace: string, name: string): boolean;
  readonly size: number;
  entries(): Iterable<[namespace: string, name: string, value: V]>;
}

/** A frozen copy-free view: the index can no longer be changed through any reference. */
export function freezeIndex<V>(index: SecretIndex<V>): ReadonlySecretIndex<V> {
  const refuse = () => {
    throw new TypeError("a Snapshot is immutable");
  };
  Object.defineProperties(index, { set: { value: refuse }, delete: { value: refuse } });
  return Object.freeze(index);
}
