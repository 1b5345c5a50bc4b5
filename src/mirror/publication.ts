// One Snapshot's way out of the mirror, from the build to every consumer: the rebuild builds it
// (pure, `nextSnapshot` → `build`), the holder swaps it in (the ops listener reads it there), the
// observers hear what it cost (metrics, logs: telemetry only), and then each sink gets it, in the
// order registered: the data thread, each proxy's pusher, the state keeper (sidecar.ts).

import type { Clock } from "../clock.ts";
import type { Registry } from "../registry/schema.ts";
import { routeTableFor } from "../snapshot/build.ts";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import type { RouteTable } from "../snapshot/types.ts";
import type { NextSnapshot } from "./next-snapshot.ts";
import type { MirrorObserver } from "./observer.ts";
import type { Reflected, SnapshotSink } from "./sink.ts";

/**
 * After a Snapshot of new routes is published, when their Secret index (`slotsBySecret`) is
 * built: off the way to ready, which waits for the data thread to apply that Snapshot (a few ms
 * after the publication), and before a change of an App Secret needs it.
 */
export const SECRET_INDEX_DELAY_MS = 200;

/** Hands each published Snapshot to the holder, the observers and the sinks. */
export class Publication {
  readonly #holder: SnapshotHolder;
  readonly #observer: Required<MirrorObserver>;
  readonly #sinks: readonly SnapshotSink[];
  readonly #clock: Clock;
  #routes: { readonly registry: Registry | null; readonly table: RouteTable } | null = null;
  /** The routes last published, and the pending build of their Secret index. */
  #indexed: { readonly table: RouteTable; readonly cancel: () => void } | null = null;

  constructor(options: {
    readonly holder: SnapshotHolder;
    readonly observer: Required<MirrorObserver>;
    readonly sinks: readonly SnapshotSink[];
    readonly clock: Clock;
  }) {
    this.#holder = options.holder;
    this.#observer = options.observer;
    this.#sinks = options.sinks;
    this.#clock = options.clock;
  }

  /** The route table of every Snapshot built from `registry`: built once per adopted Registry. */
  readonly routesFor = (registry: Registry | null): RouteTable => {
    if (this.#routes?.registry !== registry)
      this.#routes = { registry, table: routeTableFor(registry) };
    return this.#routes.table;
  };

  /** A Registry was adopted, which the next whole build reads: each sink may prepare its routes. */
  adopted(registry: Registry | null): void {
    const routes = () => this.routesFor(registry);
    for (const sink of this.#sinks) sink.prepare?.(routes);
  }

  /**
   * Swaps `next` in and hands it on. `started`: when its build began; `since`: when the oldest
   * event it reflects was received (null: none, or the first Snapshot).
   */
  publish(
    next: NextSnapshot,
    started: number,
    since: number | null,
    reflected: Reflected | null,
  ): void {
    const first = this.#holder.current() === null;
    this.#holder.swap(next.snapshot);
    const { routes } = next.snapshot;
    if (this.#indexed?.table !== routes) {
      this.#indexed?.cancel();
      const cancel = this.#clock.setTimer(SECRET_INDEX_DELAY_MS, () => void routes.slotsBySecret);
      this.#indexed = { table: routes, cancel };
    }
    const now = this.#clock.now();
    this.#observer.published({
      ...next,
      buildMs: now - started,
      eventToSwapMs: first || since === null ? null : now - since,
    });
    for (const sink of this.#sinks) sink.publish(next.snapshot, reflected);
  }

  /** The inputs settled without a new Snapshot: the sinks get the served one again. */
  settled(reflected: Reflected): void {
    const served = this.#holder.current();
    if (served !== null) for (const sink of this.#sinks) sink.publish(served, reflected);
  }

  /** Cancels a pending build of a Secret index. */
  stop(): void {
    this.#indexed?.cancel();
  }

  /** The API server was heard from. */
  heard(reflected: Reflected | null): void {
    this.#observer.contact();
    for (const sink of this.#sinks) sink.heard?.(reflected);
  }
}
