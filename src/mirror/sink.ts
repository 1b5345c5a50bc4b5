// What the mirror hands on after each swap, and to whom: every consumer of published Snapshots is
// a sink registered by name, told in registration order (ADR 63). Observers hear telemetry only.

import type { RouteTable, Snapshot } from "../snapshot/types.ts";
import type { MirrorInputs, WatchPositions } from "./inputs.ts";

/**
 * What a Snapshot reflects of the watches, when its inputs are one consistent whole: where each
 * watch stood, and the inputs themselves.
 */
export interface Reflected {
  readonly positions: WatchPositions;
  /** The inputs, read from the mirror now: valid during the call that handed them only. */
  inputs(): MirrorInputs;
  /**
   * The inputs as they are when called, at any time later, if the mirror's are still one whole
   * (and so those of the newest Snapshot); null when they are not. A sink that writes at most
   * every few seconds reads them then, not on every Snapshot (ADR 82).
   */
  current(): MirrorInputs | null;
}

/**
 * One consumer of published Snapshots (the data thread, a proxy's pusher, the state keeper).
 *
 * Contract: called synchronously on the mirror's turn, after the holder swapped, in the order
 * the sinks were registered; a sink must not throw and must not block: any I/O runs later,
 * buffered-one (only the newest Snapshot matters). Nothing handed here may be logged: Snapshots
 * and inputs carry Secret bytes.
 */
export interface SnapshotSink {
  readonly name: string;
  /**
   * A Registry was adopted: `routes` builds (once, shared with the Snapshots built from it) the
   * route table they will have. The first comes while the App Secrets are still being listed,
   * so work that depends on the Registry alone can start before the first Snapshot.
   */
  prepare?(routes: () => RouteTable): void;
  /**
   * The newest Snapshot, and what it reflects (null while its inputs are not one consistent
   * whole: a Registry being adopted, a fetch failed, a warm start not yet confirmed). The same
   * Snapshot comes again, reflecting more, when its inputs settled without changing it.
   */
  publish(snapshot: Snapshot, reflected: Reflected | null): void;
  /**
   * The API server was heard from (a list, an event, a bookmark, a watch that ended on time);
   * `reflected`: where the watches stand now when the newest Snapshot still reflects them, else null.
   */
  heard?(reflected: Reflected | null): void;
}
