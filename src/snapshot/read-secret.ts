// What an App may conclude from the Secret it references: only what this replica read of it.

import type { SecretData, SecretLookup } from "./types.ts";

/**
 * The Secret `namespace/name` as far as this replica read `keys` of it (their bytes when `bytes`,
 * else at least their presence), or undefined: it holds no such Secret, or holds it for other
 * keys, or for a key's presence only (its value UNKEPT_VALUE) where the bytes are wanted. A
 * Registry that newly reads a key of a held Secret fetches it again (ADR 68); until that fetch
 * brings it (a failed one is retried), the key's state is unknown, and the App is served as every
 * Secret not fetched yet is: absent (docs/operating.md), never as lacking a key it may well have.
 */
export function readSecret(
  secrets: SecretLookup,
  namespace: string,
  name: string,
  keys: readonly string[],
  bytes: boolean,
): SecretData | undefined {
  const held = secrets.get(namespace, name);
  if (held === undefined) return undefined;
  const read = held.keptFor;
  if (read === undefined) return held;
  for (const key of keys)
    if (!read.bytes.has(key) && (bytes || !read.presence.has(key))) return undefined;
  return held;
}
