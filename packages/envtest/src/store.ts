/**
 * The in-memory "etcd": Secrets by key, one global increasing resourceVersion, the implicit
 * namespaces, and the bounded event history. It outlives a server so a restart on the same port can
 * carry it over.
 */
import { randomUUID } from "node:crypto";
import { EventHistory, StoreEvent, type TooOld } from "./history.ts";
import { compareBytes, type SecretJSON, StoredSecret } from "./secret.ts";

/**
 * A namespace as stored; labels exclude the `kubernetes.io/metadata.name` label every namespace
 * gets.
 */
export interface NamespaceRecord {
  readonly name: string;
  readonly uid: string;
  readonly creationTimestamp: string;
  readonly resourceVersion: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The parts of a Namespace a client can change. */
export interface NamespaceMeta {
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

/** A consistent view of every Secret at one resourceVersion, in list (key) order. */
export interface StoreView {
  readonly rv: number;
  readonly keys: readonly string[];
  get(key: string): StoredSecret | undefined;
}

/** How to build an empty store. */
interface StateOptions {
  /** Events retained for watch resumes and paged lists (default 1000). */
  readonly historySize?: number;
  readonly now?: () => Date;
}

const SYSTEM_NAMESPACES = ["default", "kube-node-lease", "kube-public", "kube-system"];

/** Kubernetes timestamps are RFC 3339 in UTC with whole seconds. */
export function formatTimestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * The store. Contract: every commit gets the next resourceVersion, is recorded in history, then
 * reaches every listener in commit order.
 */
export class EnvtestState {
  readonly history: EventHistory;
  readonly now: () => Date;
  #rv = 1;
  readonly #objects = new Map<string, StoredSecret>();
  #sorted: string[] | undefined;
  readonly #namespaces = new Map<string, NamespaceRecord>();
  readonly #listeners = new Set<(e: StoreEvent) => void>();

  constructor(opts: StateOptions = {}) {
    this.now = opts.now ?? (() => new Date());
    this.history = new EventHistory(opts.historySize ?? 1000, this.#rv);
    for (const ns of SYSTEM_NAMESPACES) this.ensureNamespace(ns);
  }

  /** The resourceVersion of the latest commit, as a list at "most recent" reports it. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** How many Secrets are stored. */
  get size(): number {
    return this.#objects.size;
  }

  /** The Secret at `key` (see storeKey), or undefined. */
  get(key: string): StoredSecret | undefined {
    return this.#objects.get(key);
  }

  /** Every key in list order; cached until the key set changes. */
  sortedKeys(): readonly string[] {
    this.#sorted ??= [...this.#objects.keys()].sort(compareBytes);
    return this.#sorted;
  }

  /**
   * The state as of `rv`, rebuilt by undoing retained events, or why it can no longer be rebuilt.
   */
  viewAt(rv: number): { ok: true; view: StoreView } | { ok: false; tooOld: TooOld } {
    if (rv >= this.#rv) {
      const objects = this.#objects;
      return {
        ok: true,
        view: { rv: this.#rv, keys: this.sortedKeys(), get: (k) => objects.get(k) },
      };
    }
    const since = this.history.since(rv);
    if (!since.ok) return since;
    const view = new Map(this.#objects);
    for (let i = since.events.length - 1; i >= 0; i--) {
      const e = since.events[i];
      if (e === undefined) continue;
      if (e.prev === undefined) view.delete(e.key);
      else view.set(e.key, e.prev);
    }
    const keys = [...view.keys()].sort(compareBytes);
    return { ok: true, view: { rv, keys, get: (k) => view.get(k) } };
  }

  /** Stores the Secret `build` returns for the next resourceVersion and announces it. */
  put(key: string, build: (rv: number) => SecretJSON): StoreEvent {
    const rv = this.#rv + 1;
    const next = new StoredSecret(build(rv));
    if (next.key !== key) throw new Error(`store key ${key} does not match object ${next.key}`);
    const prev = this.#objects.get(key);
    if (prev === undefined) this.#sorted = undefined;
    this.#rv = rv;
    this.#objects.set(key, next);
    this.ensureNamespace(next.obj.metadata.namespace);
    return this.#announce(
      new StoreEvent(prev === undefined ? "ADDED" : "MODIFIED", rv, key, next, prev),
    );
  }

  /** Deletes the Secret at `key` under the next resourceVersion; undefined when absent. */
  remove(key: string): StoreEvent | undefined {
    const prev = this.#objects.get(key);
    if (prev === undefined) return undefined;
    this.#rv += 1;
    this.#objects.delete(key);
    this.#sorted = undefined;
    return this.#announce(new StoreEvent("DELETED", this.#rv, key, undefined, prev));
  }

  /** Discards the event history: every resume from an older resourceVersion now gets 410. */
  compact(): void {
    this.history.compact(this.#rv);
  }

  /**
   * Takes the next resourceVersion without changing a Secret, as writes to other resources move
   * etcd's revision on (an API server's own leases and endpoints when it starts, for one).
   */
  advance(): void {
    this.#rv += 1;
  }

  /** Registers a listener for every later commit; returns its removal. */
  subscribe(listener: (e: StoreEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Namespaces exist implicitly: the system ones, and any a Secret was ever written to. */
  ensureNamespace(name: string): NamespaceRecord {
    let ns = this.#namespaces.get(name);
    if (ns === undefined) {
      ns = {
        name,
        uid: randomUUID(),
        creationTimestamp: formatTimestamp(this.now()),
        resourceVersion: this.#rv,
      };
      this.#namespaces.set(name, ns);
    }
    return ns;
  }

  /**
   * Creates or relabels a namespace under the next resourceVersion (namespaces share the global
   * counter, as every etcd key does; no Secret event is emitted).
   */
  putNamespace(name: string, meta: NamespaceMeta): NamespaceRecord {
    const base = this.ensureNamespace(name);
    this.#rv += 1;
    const ns: NamespaceRecord = {
      name,
      uid: base.uid,
      creationTimestamp: base.creationTimestamp,
      resourceVersion: this.#rv,
      ...(meta.labels === undefined ? {} : { labels: meta.labels }),
      ...(meta.annotations === undefined ? {} : { annotations: meta.annotations }),
    };
    this.#namespaces.set(name, ns);
    return ns;
  }

  /** The namespace called `name`, if it exists. */
  namespace(name: string): NamespaceRecord | undefined {
    return this.#namespaces.get(name);
  }

  /** Every namespace, in name order. */
  namespaces(): readonly NamespaceRecord[] {
    return [...this.#namespaces.values()].sort((a, b) => compareBytes(a.name, b.name));
  }

  #announce(e: StoreEvent): StoreEvent {
    this.history.push(e);
    for (const l of this.#listeners) l(e);
    return e;
  }
}
