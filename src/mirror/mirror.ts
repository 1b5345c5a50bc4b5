import { type Clock, systemClock } from "../kube/clock.ts";
import type { ListWatch, ObjectEventType, SecretObject } from "../kube/list-watch.ts";
import { Reflector, type ReflectorHandler, type ReflectorOptions } from "../kube/reflector.ts";
import { build, rebuildForSecrets } from "../snapshot/build.ts";
import { Coalescer, type Schedule } from "../snapshot/coalescer.ts";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import type { Snapshot } from "../snapshot/types.ts";
import { fetchSecrets, type SecretScope } from "./fetch-secrets.ts";
import { type MirrorObserver, silentObserver } from "./observer.ts";
import { RegistryTracker, type TrackedRegistry } from "./registry-state.ts";
import { SecretStore } from "./secret-store.ts";
import { addedSecrets, deriveWatchedSet, unionOf } from "./watched-set.ts";

export interface RegistrySource {
  /** Scoped to the one Registry Secret (a `metadata.name` field selector). */
  readonly listWatch: ListWatch;
  readonly namespace: string;
  readonly name: string;
  readonly key: string;
  readonly maxDecompressedBytes?: number;
}

export interface MirrorOptions {
  readonly registry: RegistrySource;
  /** One cluster-wide scope, or one per namespace. */
  readonly secrets: { readonly scopes: readonly SecretScope[]; readonly labelSelector?: string };
  readonly holder: SnapshotHolder;
  readonly watchTimeoutSeconds: number;
  readonly observer?: MirrorObserver;
  readonly clock?: Clock;
  /** Milliseconds since the epoch, for `builtAt`. */
  readonly wallClock?: () => number;
  readonly random?: () => number;
  readonly schedule?: Schedule;
  /** Passed to every reflector (backoff and deadlines for tests). */
  readonly reflector?: Pick<
    ReflectorOptions,
    "backoff" | "inactivityGraceMs" | "requestTimeoutMs" | "pageSize"
  >;
}

interface Ref {
  readonly namespace: string;
  readonly name: string;
}

const REFETCH_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

/**
 * One replica's mirror: reflectors feed a store; the store signals the coalescer only for
 * Secrets the served Registry references; each rebuild publishes one whole Snapshot with one
 * swap. Nothing is published before the Registry and every App Secret scope completed a list.
 */
export class Mirror {
  readonly #options: MirrorOptions;
  readonly #observer: MirrorObserver;
  readonly #clock: Clock;
  readonly #wallClock: () => number;
  readonly #store = new SecretStore();
  readonly #coalescer: Coalescer;
  readonly #registryReflector: Reflector;
  readonly #secretReflectors: Reflector[];
  readonly #stop = new AbortController();
  readonly #registry: RegistryTracker;
  #registryDirty = false;
  #served: TrackedRegistry = {
    registry: null,
    status: { present: false, resourceVersion: null, error: null },
    newlyRefused: false,
  };
  #watched = deriveWatchedSet(null);
  #dirty: Ref[] = [];
  #oldestEvent: number | null = null;
  #secretScopesSynced = 0;
  #synced = false;
  #unfetched: Ref[] = [];
  #refetchAttempt = 0;
  #refetchDue = false;
  #cancelRefetch: (() => void) | null = null;
  #reportedCoalesced = 0;

  constructor(options: MirrorOptions) {
    this.#options = options;
    this.#observer = options.observer ?? silentObserver;
    this.#clock = options.clock ?? systemClock;
    this.#wallClock = options.wallClock ?? Date.now;
    this.#registry = new RegistryTracker(options.registry);
    this.#coalescer = new Coalescer({
      run: () => this.#rebuild(),
      onError: (e) => this.#observer.rebuildFailed(e),
      ...(options.schedule === undefined ? {} : { schedule: options.schedule }),
    });
    const reflector = (name: string, listWatch: ListWatch, handler: ReflectorHandler) =>
      new Reflector({
        ...options.reflector,
        name,
        listWatch,
        handler,
        watchTimeoutSeconds: options.watchTimeoutSeconds,
        clock: this.#clock,
        ...(options.random === undefined ? {} : { random: options.random }),
        onStatus: (status) => {
          if (
            status.kind === "listed" ||
            (status.kind === "watch-restart" && status.reason === "timeout")
          ) {
            this.#observer.contact();
          }
          this.#observer.reflector(name, status);
        },
      });
    this.#registryReflector = reflector("registry", options.registry.listWatch, {
      onEvent: (e) => this.#onRegistryEvent(e.type, e.object),
      onSynced: () => this.#onRegistrySynced(),
      // A quiet cluster sends only bookmarks; they are contact all the same.
      onBookmark: () => this.#observer.contact(),
    });
    this.#secretReflectors = options.secrets.scopes.map((scope) =>
      reflector(`secrets/${scope.namespace ?? "*"}`, scope.listWatch, {
        onEvent: (e) => this.#onSecretEvent(e.type, e.object),
        onSynced: () => this.#onSecretScopeSynced(),
        onListed: (keys, resourceVersion) =>
          this.#onSecretsListed(scope.namespace, keys, resourceVersion),
        onBookmark: () => this.#observer.contact(),
      }),
    );
  }

  /** Starts watching: the Registry first, the App Secrets once the Registry says which matter. */
  start(): void {
    this.#registryReflector.start();
  }

  /** True once the first Snapshot could be built from complete lists. */
  synced(): boolean {
    return this.#synced;
  }

  /** Rebuild counters, for tests and metrics. */
  stats(): { signals: number; rebuilds: number; coalesced: number } {
    const s = this.#coalescer.stats();
    return { signals: s.signals, rebuilds: s.runs, coalesced: s.coalesced };
  }

  /** Resolves when no rebuild is scheduled or running. */
  idle(): Promise<void> {
    return this.#coalescer.idle();
  }

  /** Stops every watch and timer; resolves when nothing of the mirror runs any more. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#cancelRefetch?.();
    await Promise.all([this.#registryReflector, ...this.#secretReflectors].map((r) => r.stop()));
    await this.#coalescer.stop();
  }

  #onRegistryEvent(type: ObjectEventType, object: SecretObject): void {
    this.#observer.contact();
    if (!this.#registry.observe(type === "DELETED", object)) return;
    this.#registryDirty = true;
    this.#signal();
  }

  #onRegistrySynced(): void {
    // The watched set must exist before the App Secrets are listed, so that the first list keeps
    // exactly the referenced Secrets and needs no fetch afterwards.
    this.#served = this.#registry.serve(this.#served.registry);
    this.#registryDirty = false;
    this.#watched = deriveWatchedSet(this.#served.registry);
    this.#store.setWatched(this.#watched);
    if (this.#served.newlyRefused) this.#observer.registryRejected(this.#served.status.error!);
    if (this.#secretReflectors.length === 0) this.#onSecretScopeSynced();
    for (const r of this.#secretReflectors) r.start();
  }

  #onSecretEvent(type: ObjectEventType, object: SecretObject): void {
    this.#observer.contact();
    const applied = this.#store.apply(type === "DELETED" ? "delete" : "upsert", object, "watch");
    if (applied === "ignored") this.#observer.ignored();
    if (applied !== "changed") return;
    this.#dirty.push({ namespace: object.metadata.namespace, name: object.metadata.name });
    this.#signal();
  }

  #onSecretsListed(
    namespace: string | null,
    keys: ReadonlySet<string>,
    resourceVersion: string,
  ): void {
    const deleted = this.#store.reconcileList(namespace, keys, resourceVersion);
    if (deleted.length === 0) return;
    this.#dirty.push(...deleted);
    this.#signal();
  }

  #onSecretScopeSynced(): void {
    this.#secretScopesSynced++;
    if (this.#synced || this.#secretScopesSynced < this.#secretReflectors.length) return;
    this.#synced = true;
    this.#observer.synced();
    this.#coalescer.signal();
  }

  #signal(): void {
    this.#oldestEvent ??= this.#clock.now();
    this.#coalescer.signal();
  }

  async #rebuild(): Promise<void> {
    if (!this.#synced || this.#stop.signal.aborted) return;
    const previous = this.#options.holder.current();
    let whole = previous === null;
    let statusChanged = false;
    if (this.#registryDirty) {
      this.#registryDirty = false;
      const served = this.#registry.serve(this.#served.registry);
      if (served.newlyRefused) this.#observer.registryRejected(served.status.error!);
      if (served.registry !== this.#served.registry) {
        await this.#adoptWatchedSet(deriveWatchedSet(served.registry));
        whole = true;
      }
      statusChanged = JSON.stringify(served.status) !== JSON.stringify(this.#served.status);
      this.#served = served;
    }
    if (this.#refetchDue) await this.#refetch();
    if (this.#stop.signal.aborted) return;

    const changed = this.#dirty;
    this.#dirty = [];
    const oldestEvent = this.#oldestEvent;
    this.#oldestEvent = null;
    if (!whole && !statusChanged && changed.length === 0) return;

    const started = this.#clock.now();
    const meta = {
      revision: (previous?.revision ?? 0) + 1,
      builtAt: this.#wallClock(),
      registry: this.#served.status,
    };
    const view = this.#store.view;
    const next: Snapshot =
      whole || previous === null
        ? build(this.#served.registry, view, meta)
        : rebuildForSecrets(previous, changed, view, meta);
    this.#options.holder.swap(next);
    const now = this.#clock.now();
    this.#observer.published({
      snapshot: next,
      kind: whole ? "whole" : "secrets",
      buildMs: now - started,
      eventToSwapMs: previous === null || oldestEvent === null ? null : now - oldestEvent,
    });
    const { coalesced } = this.#coalescer.stats();
    if (coalesced > this.#reportedCoalesced)
      this.#observer.coalesced(coalesced - this.#reportedCoalesced);
    this.#reportedCoalesced = coalesced;
  }

  /** Moves to a new watched set, fetching the Secrets it adds (their bytes were never kept). */
  async #adoptWatchedSet(next: ReturnType<typeof deriveWatchedSet>): Promise<void> {
    const added = addedSecrets(this.#watched, next);
    if (added.length > 0) {
      // Watch both sets while fetching: an event for an added Secret during the fetch is kept.
      this.#store.setWatched(unionOf(this.#watched, next));
      await this.#fetch(added);
    }
    this.#store.setWatched(next);
    this.#watched = next;
    this.#unfetched = this.#unfetched.filter((r) => next.has(r.namespace, r.name));
  }

  async #fetch(refs: readonly Ref[]): Promise<void> {
    const outcome = await fetchSecrets(this.#store, refs, {
      scopes: this.#options.secrets.scopes,
      selective: this.#options.secrets.labelSelector !== undefined,
      signal: this.#stop.signal,
    });
    this.#dirty.push(...outcome.changed);
    if (outcome.failed.length === 0) {
      this.#refetchAttempt = 0;
      return;
    }
    if (this.#stop.signal.aborted) return;
    this.#observer.fetchFailed(
      outcome.failed.length,
      outcome.error === null ? "unknown" : describe(outcome.error),
    );
    this.#unfetched.push(...outcome.failed);
    const delay =
      REFETCH_DELAYS_MS[Math.min(this.#refetchAttempt++, REFETCH_DELAYS_MS.length - 1)]!;
    this.#cancelRefetch?.();
    this.#cancelRefetch = this.#clock.setTimer(delay, () => {
      this.#cancelRefetch = null;
      this.#refetchDue = true;
      this.#coalescer.signal();
    });
  }

  async #refetch(): Promise<void> {
    this.#refetchDue = false;
    const refs = this.#unfetched.filter((r) => this.#watched.has(r.namespace, r.name));
    this.#unfetched = [];
    if (refs.length > 0) await this.#fetch(refs);
  }
}

function describe(error: { kind: string; message?: string; status?: number }): string {
  return error.kind === "http"
    ? `HTTP ${error.status}: ${error.message}`
    : `${error.kind}: ${error.message ?? ""}`;
}
