// The prototype of every record below: no members of its own and none inherited. A record made
// with Object.create(null) reads the same, but V8 keeps such an object in dictionary mode, with a
// hidden class of its own once frozen: 256 bytes for one key, where this one takes 56 (ADR 62).
const NO_MEMBERS: object = Object.freeze(Object.create(null));

/**
 * An empty record whose absent keys read undefined whatever their name (`constructor`,
 * `toString`), and where assigning `__proto__` adds a key like any other.
 */
export function ownRecord<V>(): Record<string, V> {
  return Object.create(NO_MEMBERS) as Record<string, V>;
}

/**
 * A Secret's data as the decoders hand it on: its own keys only, on an `ownRecord`, so that a
 * key named `constructor` or `__proto__` (valid in a Secret) is a key like any other, and a key
 * the Secret lacks reads undefined, never an Object.prototype member.
 */
export function secretData(entries: Iterable<readonly [string, string]>): Record<string, string> {
  const data = ownRecord<string>();
  for (const [key, value] of entries) data[key] = value;
  return data;
}
