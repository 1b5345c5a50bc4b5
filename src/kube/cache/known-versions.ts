// The reflector's whole memory of the cluster: key → resourceVersion of every Secret it has
// delivered, never the objects. That is what makes a relist diff possible at ~100 bytes per
// Secret, with 50,000 unrelated Secrets in the namespace.

import type { ObjectEventType, SecretObject } from "./list-watch.ts";

/** What a relist's DELETED carries: the identity and last known version, no data. */
function tombstone(namespace: string, name: string, resourceVersion: string): SecretObject {
  return { metadata: { namespace, name, resourceVersion } };
}

/** A `namespace/name` key's two parts: neither a namespace nor a name holds a slash. */
function parts(key: string): readonly [namespace: string, name: string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/**
 * Delivered Secrets by namespace and name, with the resourceVersion last delivered. Keyed in two
 * levels, not by a `namespace/name` string: building and hashing one per listed object was 90 ms
 * of a cold start's main thread at 100k Secrets (12-07). The keys of its interface are
 * `namespace/name` all the same (`secretKey`).
 */
export class KnownVersions {
  readonly #index = new Map<string, Map<string, string>>();
  #size = 0;
  /** Objects the handler holds from before this run, not recorded yet (`seed`). */
  #seed: Iterable<readonly [key: string, resourceVersion: string]> | null = null;

  get size(): number {
    if (this.#seed !== null) this.#recordSeed();
    return this.#size;
  }

  /**
   * Records a listed object. Returns how to deliver it: ADDED for a new key, MODIFIED for a
   * changed resourceVersion, undefined when the handler already has this exact version.
   */
  listed(object: SecretObject): "ADDED" | "MODIFIED" | undefined {
    if (this.#seed !== null) this.#recordSeed();
    const { namespace, name, resourceVersion } = object.metadata;
    const known = this.#set(namespace, name, resourceVersion);
    if (known === resourceVersion) return undefined;
    return known === undefined ? "ADDED" : "MODIFIED";
  }

  /**
   * Records the objects the handler holds from before this run (a resumed reflector), the first
   * time the index is used: at 100k Secrets, recording them took 35 ms of a warm start, on its
   * way to ready, where the first watch event or relist needs them only later.
   */
  seed(known: Iterable<readonly [key: string, resourceVersion: string]>): void {
    if (this.#seed !== null || this.#size > 0)
      throw new Error("a reflector is seeded once, before anything else");
    this.#seed = known;
  }

  /** Records the seed before anything else reads or changes the index: each use checks the field. */
  #recordSeed(): void {
    const seed = this.#seed!;
    this.#seed = null;
    for (const [key, resourceVersion] of seed) this.#set(...parts(key), resourceVersion);
  }

  /** Sets a version; returns the one it replaced. */
  #set(namespace: string, name: string, resourceVersion: string): string | undefined {
    let names = this.#index.get(namespace);
    if (names === undefined) {
      names = new Map();
      this.#index.set(namespace, names);
    }
    const known = names.get(name);
    if (known === undefined) this.#size++;
    if (known !== resourceVersion) names.set(name, resourceVersion);
    return known;
  }

  #delete(namespace: string, name: string): string | undefined {
    const names = this.#index.get(namespace);
    const known = names?.get(name);
    if (known === undefined) return undefined;
    names!.delete(name);
    this.#size--;
    if (names!.size === 0) this.#index.delete(namespace);
    return known;
  }

  /** Whether a Secret of this key was delivered and not deleted since. */
  has(key: string): boolean {
    if (this.#seed !== null) this.#recordSeed();
    const [namespace, name] = parts(key);
    return this.#index.get(namespace)?.has(name) ?? false;
  }

  /** Forgets each of `keys` it knows and returns a tombstone for it. */
  remove(keys: Iterable<string>): SecretObject[] {
    if (this.#seed !== null) this.#recordSeed();
    const gone: SecretObject[] = [];
    for (const key of keys) {
      const [namespace, name] = parts(key);
      const known = this.#delete(namespace, name);
      if (known !== undefined) gone.push(tombstone(namespace, name, known));
    }
    return gone;
  }

  /** Records a watch event as the server sent it. */
  watched(type: ObjectEventType, object: SecretObject): void {
    if (this.#seed !== null) this.#recordSeed();
    const { namespace, name, resourceVersion } = object.metadata;
    if (type === "DELETED") this.#delete(namespace, name);
    else this.#set(namespace, name, resourceVersion);
  }

  /** Forgets every key not in keep and returns a tombstone for each, by namespace. */
  removeAllBut(keep: ReadonlySet<string>): SecretObject[] {
    if (this.#seed !== null) this.#recordSeed();
    const gone: SecretObject[] = [];
    // Every key of keep was recorded by this list, so equal sizes mean nothing else is known:
    // the first list of a reflector (10k keys) skips the walk.
    if (this.#size === keep.size) return gone;
    for (const [namespace, names] of this.#index) {
      for (const [name, known] of names) {
        if (keep.has(`${namespace}/${name}`)) continue;
        gone.push(tombstone(namespace, name, known));
      }
    }
    for (const { metadata } of gone) this.#delete(metadata.namespace, metadata.name);
    return gone;
  }
}
