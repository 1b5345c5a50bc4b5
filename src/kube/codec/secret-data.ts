/**
 * A Secret's data as the decoders hand it on: its own keys only, on an object with no
 * prototype, so that a key named `constructor` or `__proto__` (valid in a Secret) is a key like
 * any other, and a key the Secret lacks reads undefined, never an Object.prototype member.
 */
export function secretData(entries: Iterable<readonly [string, string]>): Record<string, string> {
  const data: Record<string, string> = Object.create(null);
  for (const [key, value] of entries) data[key] = value;
  return data;
}
