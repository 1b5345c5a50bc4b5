import type { SecretObject } from "../kube/cache/list-watch.ts";
import type { ListedKeys } from "../kube/cache/reflector-handler.ts";
import { ownRecord } from "../kube/codec/secret-data.ts";
import type { SecretRef } from "../registry/schema.ts";
import { SecretIndex } from "../snapshot/secret-index.ts";
import {
  type ReadKeys,
  type SecretData,
  type SecretLookup,
  UNKEPT_VALUE,
} from "../snapshot/types.ts";
import type { AppSecret, AppSecretList } from "./inputs.ts";
import { ListedIndex } from "./listed-index.ts";
import { compareResourceVersions } from "./resource-version.ts";
import { covers, demoted, NO_KEYS, narrowed, type WatchedLookup } from "./watched-set.ts";

/**
 * What the store keeps of a Secret's data, in a frozen `ownRecord`, shared where no bytes are
 * kept: the value of each key read for its bytes; for a key read only for its presence, "" or
 * UNKEPT_VALUE (ADR 68). It shares nothing mutable with the decoder, keeps no byte an App does
 * not read (a `tls.key` beside the token), and a key the Secret lacks reads undefined whatever
 * its name. An unkept value stays unkept: the bytes were never here (a fetch brings them,
 * `keptFor` says so).
 */
function keptData(
  data: Readonly<Record<string, string>> | undefined,
  keys: ReadKeys,
): SecretData["data"] {
  if (keys.bytes.size === 0 && keys.presence.size <= MAX_SHARED_PRESENCE)
    return sharedPresence(data, keys);
  return ownKept(data, keys);
}

function ownKept(
  data: Readonly<Record<string, string>> | undefined,
  keys: ReadKeys,
): SecretData["data"] {
  const kept = ownRecord<string>();
  if (data !== undefined) {
    for (const k of keys.bytes) if (Object.hasOwn(data, k)) kept[k] = data[k]!;
    for (const k of keys.presence)
      if (Object.hasOwn(data, k)) kept[k] = data[k] === "" ? "" : UNKEPT_VALUE;
  }
  return Object.freeze(kept);
}

/** Presence keys up to which a shared record's code (3 states a key) stays a small integer. */
const MAX_SHARED_PRESENCE = 16;

/**
 * The frozen kept records of Secrets read for their keys' presence only, by the shared `keys`
 * and the state of each key (absent, empty, non-empty): one record for all the Secrets that
 * read the same. At 100k Apps without a served credential, a record each was 100k objects.
 */
const presenceRecords = new WeakMap<ReadKeys, Map<number, SecretData["data"]>>();

function sharedPresence(
  data: Readonly<Record<string, string>> | undefined,
  keys: ReadKeys,
): SecretData["data"] {
  let code = 0;
  for (const k of keys.presence)
    code = code * 3 + (data === undefined || !Object.hasOwn(data, k) ? 0 : data[k] === "" ? 1 : 2);
  let byCode = presenceRecords.get(keys);
  if (byCode === undefined) {
    byCode = new Map();
    presenceRecords.set(keys, byCode);
  }
  let kept = byCode.get(code);
  if (kept === undefined) {
    kept = ownKept(data, keys);
    byCode.set(code, kept);
  }
  return kept;
}

/** What `keptData(data, keys)` holds: a bytes key whose value came unkept is presence only. */
function keptFor(data: Readonly<Record<string, string>> | undefined, keys: ReadKeys): ReadKeys {
  if (data === undefined) return keys;
  // No array on the way of every listed Secret: only a state file hands back unkept values.
  let unkept: string[] | undefined;
  for (const k of keys.bytes) {
    if (data[k] !== UNKEPT_VALUE || !Object.hasOwn(data, k)) continue;
    unkept ??= [];
    unkept.push(k);
  }
  return unkept === undefined ? keys : demoted(keys, unkept);
}

/**
 * A present Secret as the store holds it: what a Snapshot reads, and the keys its bytes were kept
 * for (a key referenced since then was dropped when the Secret arrived, so the same
 * resourceVersion read again is news, not a repeat). One object, not a second index beside it:
 * at 100k Secrets that index held 3.6 MiB of hash table.
 */
interface Held extends AppSecret {
  readonly keptFor: ReadKeys;
}

/** Where a Secret's state came from: a watch event is in order; a GET may race the watch. */
type Source = "watch" | "get";

/** What applying one observation did to the store. */
type Applied = "ignored" | "unchanged" | "changed";

/**
 * The Secret bytes this replica keeps: only the referenced keys of the Secrets the served
 * Registry references (the watched set). Deleted watched Secrets leave a tombstone with the
 * deletion's resourceVersion, so a GET that raced the watch cannot resurrect them.
 */
export class SecretStore {
  readonly #present = new ListedIndex<Held>();
  readonly #deletedAt = new SecretIndex<string>();
  #watched: WatchedLookup = new SecretIndex();
  /**
   * Held Secrets not read for every key the watched set reads of them: a GET for the key found
   * the Secret gone (404), which leaves it as it arrived until the watch tells of the deletion.
   */
  readonly #unread = new SecretIndex<true>();

  /** The Secrets a Snapshot may read. */
  get lookup(): SecretLookup {
    return this.#present;
  }

  /**
   * Every present Secret, the held objects themselves: what a state file keeps. At 100k Secrets
   * a copy of each took 25-38 ms of the main thread per Snapshot published (ADR 78); the capture
   * is kept while nothing changes, and never changed once handed out (ListedIndex, ADR 85).
   */
  present(): AppSecretList {
    return this.#present.list();
  }

  isWatched(namespace: string, name: string): boolean {
    return this.#watched.has(namespace, name);
  }

  /**
   * True while some held Secret is not read for a key the watched set reads: the store then
   * holds what no state of the cluster held for the Registry served (its Snapshot serves that
   * App's Secret as not fetched, `readSecret`), and its inputs are not one whole to save.
   */
  get holdsUnread(): boolean {
    return this.#unread.size > 0;
  }

  /** Records whether a held Secret was read for all of `keys`, as `read` says it was. */
  #markRead(namespace: string, name: string, read: ReadKeys, keys: ReadKeys | undefined): void {
    if (read === keys || keys === undefined) {
      if (this.#unread.size > 0) this.#unread.delete(namespace, name);
    } else this.#unread.set(namespace, name, true);
  }

  /**
   * Replaces the watched set with one that reads every Secret of the current set at least as much
   * (`unionOf`): nothing held is dropped or narrowed, so nothing held is walked (at 100k Secrets
   * that walk was 57-67 ms of the turn that adopts a Registry).
   */
  widenWatched(wider: WatchedLookup): void {
    this.#watched = wider;
  }

  /**
   * Replaces the watched set; drops everything kept for Secrets no longer in it, and the values
   * of keys no longer referenced.
   */
  setWatched(watched: WatchedLookup): void {
    this.#watched = watched;
    for (const [namespace, name] of [...this.#deletedAt.entries()])
      if (!watched.has(namespace, name)) this.#deletedAt.delete(namespace, name);
    for (const [namespace, name, held] of [...this.#present.entries()]) {
      const keys = watched.get(namespace, name);
      if (keys === undefined) {
        this.#present.delete(namespace, name);
        this.#markRead(namespace, name, NO_KEYS, undefined);
        continue;
      }
      // `narrowed` gives back `keys` itself exactly when the Secret was read for all of them.
      const kept = narrowed(keys, held.keptFor);
      this.#markRead(namespace, name, kept, keys);
      if (kept === held.keptFor) continue;
      this.#present.set(namespace, name, {
        namespace,
        name,
        data: keptData(held.data, kept),
        resourceVersion: held.resourceVersion,
        keptFor: kept,
      });
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
    listed: ListedKeys,
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
      this.#markRead(ns, name, NO_KEYS, undefined);
      deleted.push({ namespace: ns, name });
    }
    return deleted;
  }

  /** The resourceVersion of what the store holds for a Secret, present or deleted. */
  resourceVersionOf(namespace: string, name: string): string | undefined {
    return (
      this.#present.get(namespace, name)?.resourceVersion ?? this.#deletedAtOf(namespace, name)
    );
  }

  /** Without a lookup while nothing was deleted: the first list and a warm start's seed. */
  #deletedAtOf(namespace: string, name: string): string | undefined {
    return this.#deletedAt.size === 0 ? undefined : this.#deletedAt.get(namespace, name);
  }

  /**
   * Applies an ADDED/MODIFIED (object) or DELETED observation. Unwatched Secrets are ignored and
   * nothing of them is kept. An observation older than what the store holds is ignored.
   */
  apply(kind: "upsert" | "delete", object: SecretObject, source: Source): Applied {
    const { namespace, name, resourceVersion } = object.metadata;
    const keys = this.#watched.get(namespace, name);
    if (keys === undefined) return "ignored";
    const present = this.#present.get(namespace, name);
    const held = present?.resourceVersion ?? this.#deletedAtOf(namespace, name);
    if (held !== undefined) {
      const order = compareResourceVersions(resourceVersion, held);
      // A watch delivers in order, so only a GET that got ahead of it can be newer than an event.
      if (order !== null && order < 0) return "unchanged";
      if (
        order === 0 &&
        (kind === "delete"
          ? present === undefined
          : present !== undefined && covers(present.keptFor, keys))
      )
        return "unchanged";
      if (order === null && source === "get") return "unchanged";
    }
    if (kind === "delete") {
      this.#present.delete(namespace, name);
      this.#deletedAt.set(namespace, name, resourceVersion);
      this.#markRead(namespace, name, NO_KEYS, undefined);
    } else {
      if (this.#deletedAt.size > 0) this.#deletedAt.delete(namespace, name);
      const read = keptFor(object.data, keys);
      this.#present.set(namespace, name, {
        namespace,
        name,
        data: keptData(object.data, keys),
        resourceVersion,
        keptFor: read,
      });
      this.#markRead(namespace, name, read, keys);
    }
    return "changed";
  }
}
