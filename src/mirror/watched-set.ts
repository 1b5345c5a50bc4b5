import type { Registry, SecretRef } from "../registry/schema.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";

/** The Secrets a Registry references, each with the keys its Apps read. */
export type WatchedSet = SecretIndex<ReadonlySet<string>>;

/** The Secrets and keys a Registry references: the only bytes this replica keeps. */
export function deriveWatchedSet(registry: Registry | null): WatchedSet {
  const watched = new SecretIndex<Set<string>>();
  for (const { secretRef: ref } of registry?.apps ?? []) {
    const keys = watched.get(ref.namespace, ref.name);
    if (keys === undefined) watched.set(ref.namespace, ref.name, new Set([ref.key]));
    else keys.add(ref.key);
  }
  return watched;
}

/**
 * Secrets in `next` whose referenced keys `previous` did not hold all of: their bytes (or those
 * of a newly read key) were dropped and must be fetched.
 */
export function addedSecrets(previous: WatchedSet, next: WatchedSet): SecretRef[] {
  const added: SecretRef[] = [];
  for (const [namespace, name, keys] of next.entries()) {
    const before = previous.get(namespace, name);
    if (before === undefined || [...keys].some((k) => !before.has(k)))
      added.push({ namespace, name });
  }
  return added;
}

/** Both sets at once: the set watched while newly referenced Secrets are being fetched. */
export function unionOf(a: WatchedSet, b: WatchedSet): WatchedSet {
  const union = new SecretIndex<Set<string>>();
  for (const set of [a, b])
    for (const [namespace, name, keys] of set.entries()) {
      const held = union.get(namespace, name);
      if (held === undefined) union.set(namespace, name, new Set(keys));
      else for (const k of keys) held.add(k);
    }
  return union;
}
