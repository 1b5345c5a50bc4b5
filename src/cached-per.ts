// A function's results kept per argument object, for as long as the object lives: how a value
// derived from a Snapshot, an App or a chunk of Apps, which many Snapshots share, is computed once.

/** `compute`, remembered per argument: the same object gives the same result, computed once. */
export function cachedPer<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const results = new WeakMap<K, V>();
  return (key) => {
    let value = results.get(key);
    if (value === undefined) {
      value = compute(key);
      results.set(key, value);
    }
    return value;
  };
}
