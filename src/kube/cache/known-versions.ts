// The reflector's whole memory of the cluster: key → resourceVersion of every Secret it has
// delivered, never the objects. That is what makes a relist diff possible at ~100 bytes per
// Secret, with 50,000 unrelated Secrets in the namespace.

import { type ObjectEventType, type SecretObject, secretKey } from "./list-watch.ts";

/** What a relist's DELETED carries: the identity and last known version, no data. */
function tombstone(key: string, resourceVersion: string): SecretObject {
  const slash = key.indexOf("/");
  return {
    metadata: { namespace: key.slice(0, slash), name: key.slice(slash + 1), resourceVersion },
  };
}

/** Delivered Secrets by `namespace/name`, with the resourceVersion last delivered. */
export class KnownVersions {
  readonly #index = new Map<string, string>();
  /** Objects the handler holds from before this run, not recorded yet (`seed`). */
  #seed: Iterable<readonly [key: string, resourceVersion: string]> | null = null;

  get size(): number {
    if (this.#seed !== null) this.#recordSeed();
    return this.#index.size;
  }

  /**
   * Records a listed object. Returns how to deliver it: ADDED for a new key, MODIFIED for a
   * changed resourceVersion, undefined when the handler already has this exact version.
   */
  listed(
    object: SecretObject,
    key: string = secretKey(object.metadata),
  ): "ADDED" | "MODIFIED" | undefined {
    if (this.#seed !== null) this.#recordSeed();
    const known = this.#index.get(key);
    if (known === object.metadata.resourceVersion) return undefined;
    this.#index.set(key, object.metadata.resourceVersion);
    return known === undefined ? "ADDED" : "MODIFIED";
  }

  /**
   * Records the objects the handler holds from before this run (a resumed reflector), the first
   * time the index is used: at 100k Secrets, recording them took 35 ms of a warm start, on its
   * way to ready, where the first watch event or relist needs them only later.
   */
  seed(known: Iterable<readonly [key: string, resourceVersion: string]>): void {
    if (this.#seed !== null || this.#index.size > 0)
      throw new Error("a reflector is seeded once, before anything else");
    this.#seed = known;
  }

  /** Records the seed before anything else reads or changes the index: each use checks the field. */
  #recordSeed(): void {
    const seed = this.#seed!;
    this.#seed = null;
    for (const [key, resourceVersion] of seed) this.#index.set(key, resourceVersion);
  }

  /** Whether a Secret of this key was delivered and not deleted since. */
  has(key: string): boolean {
    if (this.#seed !== null) this.#recordSeed();
    return this.#index.has(key);
  }

  /** Forgets each of `keys` it knows and returns a tombstone for it. */
  remove(keys: Iterable<string>): SecretObject[] {
    if (this.#seed !== null) this.#recordSeed();
    const gone: SecretObject[] = [];
    for (const key of keys) {
      const known = this.#index.get(key);
      if (known === undefined) continue;
      this.#index.delete(key);
      gone.push(tombstone(key, known));
    }
    return gone;
  }

  /** Records a watch event as the server sent it. */
  watched(type: ObjectEventType, object: SecretObject): void {
    if (this.#seed !== null) this.#recordSeed();
    const key = secretKey(object.metadata);
    if (type === "DELETED") this.#index.delete(key);
    else this.#index.set(key, object.metadata.resourceVersion);
  }

  /** Forgets every key not in keep and returns a tombstone for each, in insertion order. */
  removeAllBut(keep: ReadonlySet<string>): SecretObject[] {
    if (this.#seed !== null) this.#recordSeed();
    const gone: SecretObject[] = [];
    // Every key of keep was recorded by this list, so equal sizes mean nothing else is known:
    // the first list of a reflector (10k keys) skips the walk.
    if (this.#index.size === keep.size) return gone;
    for (const [key, known] of this.#index) {
      if (keep.has(key)) continue;
      this.#index.delete(key);
      gone.push(tombstone(key, known));
    }
    return gone;
  }
}
