import type { Registry, SecretRef } from "../registry/schema.ts";
import { TLS_CERT_KEY, TLS_KEY_KEY } from "../snapshot/certificate.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";
import type { ReadKeys } from "../snapshot/types.ts";

/** The Secrets a Registry references, each with the keys its Apps read. */
export type WatchedSet = SecretIndex<ReadKeys>;

/** What a store asks of the Secrets it watches. */
export interface WatchedLookup {
  get(namespace: string, name: string): ReadKeys | undefined;
  has(namespace: string, name: string): boolean;
}

/** What the process serves besides routes: fixed for its life. */
export interface Served {
  /** `--serve-credentials`: a credential's value is kept. */
  readonly serveCredentials?: boolean;
  /** `--serve-certificates`: TLS Secrets are kept; off, no private key is read (ADR 56). */
  readonly serveCertificates?: boolean;
}

/** Whether `held` keeps, of a Secret, at least what `wanted` reads: the same keys or more. */
export function covers(held: ReadKeys, wanted: ReadKeys): boolean {
  for (const k of wanted.bytes) if (!held.bytes.has(k)) return false;
  for (const k of wanted.presence) if (!held.bytes.has(k) && !held.presence.has(k)) return false;
  return true;
}

/** Every key of `keys`, read either way. */
export function readsKey(keys: ReadKeys, key: string): boolean {
  return keys.bytes.has(key) || keys.presence.has(key);
}

/**
 * One `ReadKeys` per combination, shared by every Secret read that way: at 100k Apps sets of
 * their own per Secret cost about 230 bytes each, 22 MiB, for what is nearly always `{token}`.
 * Never changed: adding a key takes another shared one, whose keys keep the order they came in.
 */
class KeySets {
  readonly #sets = new Map<string, ReadKeys>();
  /**
   * The sets of one key, by how it is read: the first key of every Secret a Registry references
   * finds its set here without the arrays and id below (at 100k Apps, 54 -> 32 ms of CPU).
   */
  readonly #single = { bytes: new Map<string, ReadKeys>(), presence: new Map<string, ReadKeys>() };

  /** The shared keys of `keys` and `key`, read as `how`. */
  with(keys: ReadKeys | undefined, key: string, how: "bytes" | "presence"): ReadKeys {
    // A bound, not a cache policy: a Registry's combinations are few, a tenant's could be many.
    if (this.#sets.size > MAX_SHARED) {
      this.#sets.clear();
      this.#single.bytes.clear();
      this.#single.presence.clear();
    }
    if (keys === undefined) {
      const single = this.#single[how].get(key);
      if (single !== undefined) return single;
      const set = this.#made(undefined, key, how);
      this.#single[how].set(key, set);
      return set;
    }
    return this.#made(keys, key, how);
  }

  #made(keys: ReadKeys | undefined, key: string, how: "bytes" | "presence"): ReadKeys {
    if (keys?.bytes.has(key) === true) return keys;
    if (how === "presence" && keys?.presence.has(key) === true) return keys;
    const bytes = [...(keys?.bytes ?? [])];
    let presence = [...(keys?.presence ?? [])];
    if (how === "bytes") {
      bytes.push(key);
      presence = presence.filter((k) => k !== key);
    } else presence.push(key);
    // Secret keys are `[-._a-zA-Z0-9]+`: neither a line break nor a space is part of one.
    const id = `${bytes.join("\n")} ${presence.join("\n")}`;
    let set = this.#sets.get(id);
    if (set === undefined) {
      set = Object.freeze({ bytes: new Set(bytes), presence: new Set(presence) });
      this.#sets.set(id, set);
    }
    return set;
  }
}

const MAX_SHARED = 4096;
const shared = new KeySets();

/** No key read: what a store keeps of a Secret read for nothing. */
export const NO_KEYS: ReadKeys = Object.freeze({
  bytes: new Set<string>(),
  presence: new Set<string>(),
});

/**
 * Of `wanted`, what `held` keeps: a key `held` reads for its presence only stays so, a key it
 * does not read is left out.
 */
export function narrowed(wanted: ReadKeys, held: ReadKeys): ReadKeys {
  if (covers(held, wanted)) return wanted;
  let keys: ReadKeys | undefined;
  for (const k of wanted.bytes)
    if (held.bytes.has(k)) keys = shared.with(keys, k, "bytes");
    else if (held.presence.has(k)) keys = shared.with(keys, k, "presence");
  for (const k of wanted.presence) if (readsKey(held, k)) keys = shared.with(keys, k, "presence");
  return keys ?? NO_KEYS;
}

/** `keys` with `unkept` read for their presence only. */
export function demoted(keys: ReadKeys, unkept: readonly string[]): ReadKeys {
  let out: ReadKeys | undefined;
  for (const k of keys.bytes) out = shared.with(out, k, unkept.includes(k) ? "presence" : "bytes");
  for (const k of keys.presence) out = shared.with(out, k, "presence");
  return out ?? NO_KEYS;
}

/**
 * The Secrets and keys a Registry references, and how each key is read: the only bytes this
 * replica keeps are the values of served credentials and certificates.
 */
export function deriveWatchedSet(registry: Registry | null, served: Served = {}): WatchedSet {
  const watched = new SecretIndex<ReadKeys>();
  const add = (namespace: string, name: string, key: string, how: "bytes" | "presence") => {
    const keys = watched.get(namespace, name);
    const next = shared.with(keys, key, how);
    if (next !== keys) watched.set(namespace, name, next);
  };
  for (const { secretRef: ref, credential, tls } of registry?.apps ?? []) {
    const how = credential !== null && served.serveCredentials === true ? "bytes" : "presence";
    add(ref.namespace, ref.name, ref.key, how);
    if (tls === null || served.serveCertificates !== true) continue;
    add(tls.secretRef.namespace, tls.secretRef.name, TLS_CERT_KEY, "bytes");
    add(tls.secretRef.namespace, tls.secretRef.name, TLS_KEY_KEY, "bytes");
  }
  return watched;
}

/**
 * Secrets in `next` that `previous` did not read at least as much of: their bytes (or those of a
 * key now read for its value) were dropped and must be fetched.
 */
export function addedSecrets(previous: WatchedSet, next: WatchedSet): SecretRef[] {
  const added: SecretRef[] = [];
  for (const [namespace, name, keys] of next.entries()) {
    const before = previous.get(namespace, name);
    if (before === undefined || !covers(before, keys)) added.push({ namespace, name });
  }
  return added;
}

/**
 * Both sets at once, the set watched while newly referenced Secrets are being fetched: `previous`,
 * but for the Secrets `added` (`addedSecrets(previous, next)`), read as both sets read them. Made
 * in proportion to `added`: every other Secret of `next` is read by `previous` at least as much.
 * At 100k Apps a union built whole took 90-100 ms of the turn that adopts a Registry.
 */
export function unionOf(
  previous: WatchedSet,
  next: WatchedSet,
  added: readonly SecretRef[],
): WatchedLookup {
  const merged = new SecretIndex<ReadKeys>();
  for (const { namespace, name } of added) {
    let held: ReadKeys | undefined;
    for (const keys of [previous.get(namespace, name), next.get(namespace, name)]) {
      for (const k of keys?.bytes ?? []) held = shared.with(held, k, "bytes");
      for (const k of keys?.presence ?? []) held = shared.with(held, k, "presence");
    }
    merged.set(namespace, name, held ?? NO_KEYS);
  }
  return {
    get: (namespace, name) => merged.get(namespace, name) ?? previous.get(namespace, name),
    has: (namespace, name) => merged.has(namespace, name) || previous.has(namespace, name),
  };
}
