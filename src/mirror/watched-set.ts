import type { Registry, SecretRef } from "../registry/schema.ts";
import { TLS_CERT_KEY, TLS_KEY_KEY } from "../snapshot/certificate.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";

/** The Secrets a Registry references, each with the keys its Apps read. */
export type WatchedSet = SecretIndex<ReadonlySet<string>>;

/**
 * The Secrets and keys a Registry references: the only bytes this replica keeps. TLS Secrets
 * only with `serveCertificates`: off, no private key is read (ADR 56).
 */
export function deriveWatchedSet(registry: Registry | null, serveCertificates = false): WatchedSet {
  const watched = new SecretIndex<Set<string>>();
  const add = (namespace: string, name: string, key: string) => {
    const keys = watched.get(namespace, name);
    if (keys === undefined) watched.set(namespace, name, new Set([key]));
    else keys.add(key);
  };
  for (const { secretRef: ref, tls } of registry?.apps ?? []) {
    add(ref.namespace, ref.name, ref.key);
    if (tls === null || !serveCertificates) continue;
    add(tls.secretRef.namespace, tls.secretRef.name, TLS_CERT_KEY);
    add(tls.secretRef.namespace, tls.secretRef.name, TLS_KEY_KEY);
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
