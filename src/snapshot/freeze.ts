function refuse(): never {
  throw new TypeError("a Snapshot is immutable");
}

/** Freezes a Map so that `set`, `delete` and `clear` throw: `Object.freeze` alone leaves them working. */
export function freezeMap<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  Object.defineProperties(map, {
    set: { value: refuse },
    delete: { value: refuse },
    clear: { value: refuse },
  });
  return Object.freeze(map);
}

/** Freezes an array and returns it typed as read-only. */
export function freezeArray<T>(items: T[]): readonly T[] {
  return Object.freeze(items);
}
