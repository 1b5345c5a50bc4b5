import type { SecretObject } from "../kube/cache/list-watch.ts";
import type { SecretRef } from "../registry/schema.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";
import type { SecretData, SecretsView } from "../snapshot/types.ts";
import { compareResourceVersions } from "./resource-version.ts";

/**
 * The values, byte strings as decoded, in a new frozen object, so the store shares
 * nothing mutable with the decoder. fromEntries defines properties: a key named `__proto__`
 * (valid in a Secret) stays a key.
 */
function secretBytes(data: Readonly<Record<string, string>> | undefined): SecretData["data"] {
  return Object.freeze(Object.fromEntries(Object.entries(data ?? {})));
}

/** Where a Secret's state came from: a watch event is in order; a GET may race the watch. */
type Source = "watch" | "get";

/** What applying one observation did to the store. */
type Applied = "ignored" | "unchanged" | "changed";

/**
 * The Secret bytes this replica keeps: only for Secrets the served Registry references (the
 * watched set). Deleted watched Secrets leave a tombstone with the deletion's resourceVersion,
 * so a GET that raced the watch cannot resurrect them.
 */
export class SecretStore {
  readonly #present = new SecretIndex<SecretData>();
  readonly #deletedAt = new SecretIndex<string>();
  #watched = new SecretIndex<true>();

  /** The Secrets a Snapshot may read. */
  get view(): SecretsView {
    return this.#present;
  }

  isWatched(namespace: string, name: string): boolean {
    return this.#watched.has(namespace, name);
  }

  /** Replaces the watched set; drops everything kept for Secrets no longer in it. */
  setWatched(watched: SecretIndex<true>): void {
    this.#watched = watched;
    for (const index of [this.#present, this.#deletedAt] as SecretIndex<unknown>[]) {
      for (const [namespace, name] of [...index.entries()]) {
        if (!watched.has(namespace, name)) index.delete(namespace, name);
      }
    }
  }

  /**
   * A complete list of one scope (a namespace, or every namespace) at `resourceVersion`: every
   * Secret of the scope the store holds, absent from the list and older than it, was deleted.
   * A watch relist reports its deletions only for Secrets the watch delivered; this also covers
   * Secrets the store got from a GET. Returns the Secrets it deleted.
   */
  reconcileList(
    namespace: string | null,
    listed: ReadonlySet<string>,
    resourceVersion: string,
  ): SecretRef[] {
    const deleted: SecretRef[] = [];
    for (const [ns, name, held] of [...this.#present.entries()]) {
      if (namespace !== null && ns !== namespace) continue;
      if (listed.has(`${ns}/${name}`)) continue;
      const order = compareResourceVersions(held.resourceVersion, resourceVersion);
      if (order !== null && order >= 0) continue;
      this.#present.delete(ns, name);
      this.#deletedAt.set(ns, name, resourceVersion);
      deleted.push({ namespace: ns, name });
    }
    return deleted;
  }

  /** The resourceVersion of what the store holds for a Secret, present or deleted. */
  resourceVersionOf(namespace: string, name: string): string | undefined {
    return (
      this.#present.get(namespace, name)?.resourceVersion ?? this.#deletedAt.get(namespace, name)
    );
  }

  /**
   * Applies an ADDED/MODIFIED (object) or DELETED observation. Unwatched Secrets are ignored and
   * nothing of them is kept. An observation older than what the store holds is ignored.
   */
  apply(kind: "upsert" | "delete", object: SecretObject, source: Source): Applied {
    const { namespace, name, resourceVersion } = object.metadata;
    if (!this.#watched.has(namespace, name)) return "ignored";
    const held = this.resourceVersionOf(namespace, name);
    if (held !== undefined) {
      const order = compareResourceVersions(resourceVersion, held);
      // A watch delivers in order, so only a GET that got ahead of it can be newer than an event.
      if (order !== null && order < 0) return "unchanged";
      if (order === 0 && (kind === "delete") === this.#deletedAt.has(namespace, name))
        return "unchanged";
      if (order === null && source === "get") return "unchanged";
    }
    if (kind === "delete") {
      this.#present.delete(namespace, name);
      this.#deletedAt.set(namespace, name, resourceVersion);
    } else {
      this.#deletedAt.delete(namespace, name);
      this.#present.set(namespace, name, { data: secretBytes(object.data), resourceVersion });
    }
    return "changed";
  }
}
