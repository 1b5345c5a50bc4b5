import type { Registry, SecretRef } from "../registry/schema.ts";
import { TLS_CERT_KEY, TLS_KEY_KEY } from "../snapshot/certificate.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";

/** The Secrets a Registry references, each with the keys its Apps read. */
export type WatchedSet = SecretIndex<ReadonlySet<string>>;

/**
 * One set per combination of keys, shared by every Secret read for those keys: at 100k
 * Apps a set of its own per Secret cost about 230 bytes each, 22 MiB, for what is nearly always
 * the one set `{token}`. The sets are never changed: adding a key takes another shared set, whose
 * keys keep the order they were added in.
 */
class KeySets {
  readonly #sets = new Map<string, ReadonlySet<string>>();

  /** The shared set of `keys` and `key`. */
  with(keys: ReadonlySet<string> | undefined, key: string): ReadonlySet<string> {
    if (keys?.has(key) === true) return keys;
    const all = keys === undefined ? [key] : [...keys, key];
    // Secret keys are `[-._a-zA-Z0-9]+`: a line break cannot be part of one.
    const id = all.join("\n");
    let set = this.#sets.get(id);
    if (set === undefined) {
      set = new Set(all);
      this.#sets.set(id, set);
    }
    return set;
  }
}

/**
 * The Secrets and keys a Registry references: the only bytes this replica keeps. TLS Secrets
 * only with `serveCertificates`: off, no private key is read (ADR 56).
 */
export function deriveWatchedSet(registry: Registry | null, serveCertificates = false): WatchedSet {
  const watched = new SecretIndex<ReadonlySet<string>>();
  const sets = new KeySets();
  const add = (namespace: string, name: string, key: string) => {
    const keys = watched.get(namespace, name);
    const next = sets.with(keys, key);
    if (next !== keys) watched.set(namespace, name, next);
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
  const union = new SecretIndex<ReadonlySet<string>>();
  const sets = new KeySets();
  for (const set of [a, b])
    for (const [namespace, name, keys] of set.entries()) {
      let held = union.get(namespace, name);
      for (const k of keys) held = sets.with(held, k);
      union.set(namespace, name, held!);
    }
  return union;
}
