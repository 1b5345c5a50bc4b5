import { type Clock, systemClock } from "../clock.ts";
import { Coalescer, NEXT_TURN } from "../coalescer.ts";
import type { ObjectEventType, SecretObject } from "../kube/cache/list-watch.ts";
import type { Reflector } from "../kube/cache/reflector.ts";
import type { ListedKeys } from "../kube/cache/reflector-handler.ts";
import type { SecretRef } from "../registry/schema.ts";
import { FROM_API_SERVER, type KeptCertificate, type SnapshotSource } from "../snapshot/types.ts";
import type { WarmStart } from "./inputs.ts";
import type { MirrorOptions } from "./mirror-options.ts";
import { nextSnapshot } from "./next-snapshot.ts";
import { observedReflector, type SharedReflectorSettings } from "./observed-reflector.ts";
import { type MirrorObserver, observeAll } from "./observer.ts";
import { PendingChanges } from "./pending-changes.ts";
import { Publication } from "./publication.ts";
import { ReferencedSecrets } from "./referenced-secrets.ts";
import { RegistryTracker } from "./registry-tracker.ts";
import type { Reflected } from "./sink.ts";
import { captureInputs, seedRegistry, seedSecrets, watchPositions } from "./warm-start.ts";

export type { MirrorOptions, RegistrySource } from "./mirror-options.ts";
export type { Reflected, SnapshotSink } from "./sink.ts";

/**
 * One replica's mirror. Data flows one way, through two buffered-one stages (README, ADR 13):
 *
 * - Registry events → the tracker → signal → adopt: serve the newest Registry and bring the
 *   referenced Secrets in line with it (fetching the ones it adds: the only network I/O besides
 *   the watches, with retries signalled back to this stage) → mark it adopted.
 * - App Secret events → the store (referenced Secrets only) → mark the changed Secrets.
 * - Marks go into one pending-changes value → signal → rebuild: take it whole, build the next
 *   Snapshot (pure) and publish it: swap, observers, then every sink in order (publication.ts).
 *
 * Nothing is published before the Registry and every App Secret scope completed a list, except
 * after a warm start: then the saved inputs are published at once, the watches resume from where
 * they were saved, and a Snapshot says it came from the state file until every watch is confirmed.
 */
export class Mirror {
  readonly #publication: Publication;
  readonly #observer: Required<MirrorObserver>;
  readonly #clock: Clock;
  readonly #wallClock: () => number;
  readonly #registry: RegistryTracker;
  readonly #referenced: ReferencedSecrets;
  readonly #pending = new PendingChanges();
  readonly #adoptions: Coalescer;
  readonly #rebuilds: Coalescer;
  readonly #reflectors: { readonly registry: Reflector; readonly secrets: readonly Reflector[] };
  /** Lists to complete before the first Snapshot: the Registry's, then each scope's. */
  #listsToGo: number;
  readonly #options: Omit<MirrorOptions, "warm">;
  /** The saved inputs until a warm start seeded them: held no longer (they are 100k objects). */
  #warm: MirrorOptions["warm"];
  /** After a warm start: reflectors whose watch has not been confirmed current yet. */
  #toConfirm = 0;
  #source: SnapshotSource = FROM_API_SERVER;
  /** After a warm start, until its first Snapshot: the certificates the state file kept. */
  #keptCertificates: ReadonlyMap<string, KeptCertificate> | undefined;
  /** Settles once the first Registry listed was served (`idle` waits for it). */
  #first: Promise<void> | null = null;
  /** After a warm start: settles once its second turn ran (`idle` waits for it). */
  #warming: Promise<void> | null = null;
  #stopped = false;

  constructor(given: MirrorOptions) {
    // The saved inputs apart: closures made here keep `options` for the mirror's life.
    const { warm: saved, ...options } = given;
    this.#observer = observeAll(options.observer ?? {});
    this.#clock = options.clock ?? systemClock;
    this.#wallClock = options.wallClock ?? Date.now;
    this.#registry = new RegistryTracker(options.registry);
    this.#publication = new Publication({
      holder: options.holder,
      observer: this.#observer,
      sinks: options.sinks ?? [],
      clock: this.#clock,
    });
    this.#options = options;
    this.#warm = saved;
    const warm = saved !== undefined;
    this.#referenced = new ReferencedSecrets({
      scopes: options.secrets.scopes,
      clock: this.#clock,
      observer: this.#observer,
      served: options,
      onRetryDue: () => this.#adoptions.signal(),
      ...(options.schedule === undefined ? {} : { schedule: options.schedule }),
    });
    const stage = (run: () => void | Promise<void>, onError: (e: unknown) => void) =>
      new Coalescer({
        run,
        onError,
        onCoalesced: (count) => this.#observer.coalesced(count),
        ...(options.schedule === undefined ? {} : { schedule: options.schedule }),
      });
    this.#adoptions = stage(() => this.#adoptRegistry(), this.#observer.adoptionFailed);
    this.#rebuilds = stage(() => this.#rebuild(), this.#observer.rebuildFailed);
    this.#listsToGo = 1 + options.secrets.scopes.length;
    const settings: SharedReflectorSettings = {
      watchTimeoutSeconds: options.watchTimeoutSeconds,
      clock: this.#clock,
      observer: this.#observer,
      contact: () => this.#publication.heard(this.#reflected(true)),
      ...(options.random === undefined ? {} : { random: options.random }),
      ...(options.reflector === undefined ? {} : { tuning: options.reflector }),
    };
    this.#reflectors = {
      registry: observedReflector(
        "registry",
        options.registry.listWatch,
        {
          onEvent: (e) => this.#onRegistryEvent(e.type, e.object),
          onSynced: () => (warm ? this.#confirmed() : this.#onRegistryListed()),
        },
        settings,
      ),
      secrets: options.secrets.scopes.map((scope) =>
        observedReflector(
          `secrets/${scope.namespace ?? "*"}`,
          scope.listWatch,
          {
            onEvent: (e) => this.#onSecretEvent(e.type, e.object),
            onSynced: () => (warm ? this.#confirmed() : this.#onListCompleted()),
            onListed: (keys, resourceVersion) =>
              this.#onSecretsListed(scope.namespace, keys, resourceVersion),
          },
          settings,
        ),
      ),
    };
  }

  /**
   * Starts watching: the Registry first, the App Secrets once the Registry says which matter.
   * After a warm start, publishes the saved inputs first, then resumes every watch.
   */
  start(): void {
    const warm = this.#warm;
    this.#warm = undefined;
    if (warm === undefined) this.#reflectors.registry.start();
    else this.#startWarm(warm);
  }

  /** True once the first Snapshot could be built from complete lists. */
  synced(): boolean {
    return this.#listsToGo === 0;
  }

  /**
   * Rebuild counters, for tests and benchmarks. Every signal either starts a run or is coalesced
   * into one; an adoption's own signal to the rebuild is the Registry event's, not another one.
   */
  stats(): { signals: number; rebuilds: number; coalesced: number } {
    const coalesced = this.#adoptions.stats().coalesced + this.#rebuilds.stats().coalesced;
    const rebuilds = this.#rebuilds.stats().runs;
    return { signals: rebuilds + coalesced, rebuilds, coalesced };
  }

  /** Resolves when no adoption or rebuild is scheduled or running. */
  async idle(): Promise<void> {
    await this.#warming;
    await this.#first;
    await this.#adoptions.idle();
    await this.#rebuilds.idle();
  }

  /** Stops every watch, fetch and timer; resolves when nothing of the mirror runs any more. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#referenced.stop();
    this.#publication.stop();
    const { registry, secrets } = this.#reflectors;
    await Promise.all([
      this.#rebuilds.stop(),
      this.#adoptions.stop(),
      ...[registry, ...secrets].map((r) => r.stop()),
    ]);
  }

  /**
   * Serves the saved inputs, publishes them, and resumes each watch where it was saved. In two
   * turns (ADR 73): the saved Registry is adopted first, so that the sinks prepare its routes (the
   * data thread indexes them on its own core) while this thread seeds the App Secrets.
   */
  #startWarm({ inputs, savedAt }: WarmStart): void {
    this.#source = Object.freeze({ kind: "state-file", savedAt });
    if (inputs.certificates !== undefined)
      this.#keptCertificates = new Map(inputs.certificates.map((k) => [k.app, k]));
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#warming = promise;
    void seedRegistry(inputs, this.#options.registry, this.#registry).then(
      (served) => this.#seedWarm(inputs, served, resolve),
      (e: unknown) => {
        this.#observer.adoptionFailed(e);
        resolve();
      },
    );
  }

  /** The second half of a warm start, a turn after its Registry was adopted. */
  #seedWarm(
    inputs: WarmStart["inputs"],
    served: Awaited<ReturnType<RegistryTracker["serve"]>>,
    resolve: () => void,
  ): void {
    if (this.#stopped) {
      resolve();
      return;
    }
    if (served.newlyRefused) this.#observer.registryRejected(served.status.error!);
    this.#publication.adopted(served.registry);
    const schedule = this.#options.schedule ?? NEXT_TURN;
    schedule(() => {
      if (!this.#stopped) {
        const resumes = seedSecrets(inputs, this.#options, served.registry, this.#referenced);
        this.#pending.registryAdopted(served, true);
        this.#listsToGo = 0;
        this.#toConfirm = 1 + this.#reflectors.secrets.length;
        this.#observer.synced();
        this.#rebuild();
        this.#reflectors.registry.start(resumes.registry);
        // A scope the state does not know (it cannot happen under the same flags) is listed.
        for (const [i, r] of this.#reflectors.secrets.entries()) r.start(resumes.scopes[i]);
      }
      resolve();
    });
  }

  /** After a warm start, one more watch is confirmed current; once all are, Snapshots say so. */
  #confirmed(): void {
    if (--this.#toConfirm !== 0) return;
    this.#source = FROM_API_SERVER;
    this.#rebuilds.signal();
  }

  #onRegistryEvent(type: ObjectEventType, object: SecretObject): void {
    if (!this.#registry.observe(type === "DELETED", object)) return;
    this.#pending.registryReceived(this.#clock.now());
    this.#adoptions.signal();
  }

  #onRegistryListed(): void {
    this.#first = this.#registry.serve().then(
      (served) => {
        if (this.#stopped) return;
        if (served.newlyRefused) this.#observer.registryRejected(served.status.error!);
        // The watched set must exist before the App Secrets are listed, so that the first list
        // keeps exactly the referenced Secrets and needs no fetch afterwards.
        this.#referenced.watch(served.registry);
        this.#pending.registryAdopted(served, true);
        for (const r of this.#reflectors.secrets) r.start();
        this.#publication.adopted(served.registry);
        this.#onListCompleted();
      },
      (e: unknown) => this.#observer.adoptionFailed(e),
    );
  }

  #onSecretEvent(type: ObjectEventType, object: SecretObject): void {
    const kind = type === "DELETED" ? "delete" : "upsert";
    const applied = this.#referenced.store.apply(kind, object, "watch");
    if (applied === "ignored") this.#observer.ignored();
    // The first Snapshot is built whole from the store: a change before it is not marked.
    if (applied !== "changed" || !this.synced()) return;
    this.#secretsChanged([{ namespace: object.metadata.namespace, name: object.metadata.name }]);
  }

  #onSecretsListed(namespace: string | null, keys: ListedKeys, resourceVersion: string): void {
    // Until the first Snapshot nothing is fetched: every Secret held came from a list, which
    // delivers its own deletions (at 100k Secrets the walk was 50 ms on the way to ready).
    if (!this.synced()) return;
    const deleted = this.#referenced.store.reconcileList(namespace, keys, resourceVersion);
    if (deleted.length > 0) this.#secretsChanged(deleted);
  }

  #secretsChanged(refs: readonly SecretRef[]): void {
    this.#pending.secretsChanged(refs, this.#clock.now());
    this.#rebuilds.signal();
  }

  #onListCompleted(): void {
    if (--this.#listsToGo !== 0) return;
    this.#observer.synced();
    // The first adoption serves any Registry event received during the App Secret lists, then
    // asks for the first rebuild.
    this.#adoptions.signal();
  }

  /**
   * The adoption stage: serves the newest Registry once the Secrets it adds were fetched, and
   * fetches again those whose fetch failed when their retry is due. Every run ends by asking
   * for a rebuild; the rebuild never waits for this stage's I/O.
   */
  async #adoptRegistry(): Promise<void> {
    if (!this.synced()) return;
    if (this.#registry.hasUnserved) {
      const before = this.#registry.served;
      const served = await this.#registry.serve();
      if (served.newlyRefused) this.#observer.registryRejected(served.status.error!);
      const whole = served.registry !== before;
      if (whole) this.#pending.secretsChanged(await this.#referenced.follow(served.registry), null);
      this.#pending.registryAdopted(served, whole);
      if (whole) this.#publication.adopted(served.registry);
    }
    this.#pending.secretsChanged(await this.#referenced.retryFailed(), null);
    this.#rebuilds.signal();
  }

  /**
   * The rebuild stage: takes the pending changes whole, builds (pure) and publishes once; when
   * nothing a Snapshot shows changed, the sinks still learn that the inputs settled.
   */
  #rebuild(): void {
    if (!this.synced()) return;
    const changes = this.#pending.take();
    const started = this.#clock.now();
    const { serveCredentials = false, serveCertificates = false } = this.#options;
    const kept = this.#keptCertificates;
    const meta = {
      builtAt: this.#wallClock(),
      source: this.#source,
      serveCredentials,
      serveCertificates,
      ...(kept === undefined ? {} : { keptCertificates: kept }),
    };
    const { lookup } = this.#referenced.store;
    const routesFor = this.#publication.routesFor;
    const next = nextSnapshot(this.#options.holder.current(), changes, lookup, meta, routesFor);
    if (next !== null) this.#keptCertificates = undefined;
    const reflected = this.#reflected(false);
    if (next !== null) this.#publication.publish(next, started, changes.since, reflected);
    else if (reflected !== null) this.#publication.settled(reflected);
  }

  /**
   * What the served Snapshot reflects; null while its inputs are not one consistent whole: before
   * the first Snapshot, while a Registry is adopted or changes wait for a rebuild (`idle`: outside
   * it), while a fetch failed or found a held Secret gone (`holdsUnread`), after a warm start until
   * the watches are confirmed.
   */
  #reflected(idle: boolean): Reflected | null {
    if (!this.synced() || this.#source !== FROM_API_SERVER) return null;
    if (this.#adoptions.busy || (idle && this.#rebuilds.busy) || this.#registry.hasUnserved)
      return null;
    if (this.#referenced.failing || this.#referenced.store.holdsUnread || !this.#pending.empty)
      return null;
    const scopes = this.#options.secrets.scopes;
    const inputs = () =>
      captureInputs(
        this.#registry,
        this.#referenced.store,
        this.#reflectors,
        scopes,
        // Only a replica serving certificates keeps certificates.
        this.#options.serveCertificates === true ? this.#options.holder.current() : null,
      );
    return {
      positions: watchPositions(this.#reflectors, scopes),
      inputs,
      current: () => this.#reflected(true)?.inputs() ?? null,
    };
  }
}
