import type { ReflectorStatus } from "../kube/cache/reflector-status.ts";
import type { Registry } from "../registry/schema.ts";
import type { Snapshot } from "../snapshot/types.ts";

/** One published Snapshot and what it cost. */
export interface Publication {
  readonly snapshot: Snapshot;
  /** `whole`: built from the Registry; `secrets`: only Apps of changed Secrets re-resolved. */
  readonly kind: "whole" | "secrets";
  readonly buildMs: number;
  /** From receiving the oldest event this Snapshot reflects to the swap; null for the first. */
  readonly eventToSwapMs: number | null;
}

/**
 * What the mirror tells the outside (metrics, logs). Called synchronously from the mirror; an
 * observer must not throw and must never be handed Secret bytes (none of these carry any).
 */
export interface MirrorObserver {
  /** Both watches listed and the first Snapshot is about to be published. */
  synced(): void;
  /**
   * A Registry was adopted, which the next whole build reads (null: none, an empty Registry).
   * The first is adopted as soon as the Registry is listed, while the App Secrets are still being
   * listed, so work that depends on the Registry alone can start before the first Snapshot.
   */
  registryAdopted(registry: Registry | null): void;
  published(publication: Publication): void;
  /** A rebuild or a Registry adoption threw: a bug, reported and survived. */
  rebuildFailed(error: unknown): void;
  /** Signals absorbed by a run (a rebuild or a Registry adoption) that another signal started. */
  coalesced(count: number): void;
  /** An event for a Secret no App references: dropped, no rebuild. */
  ignored(): void;
  /** The API server was heard from: a list, an event, a bookmark, or a watch that ended on time. */
  contact(): void;
  /** A reflector's own report: restarts, relists, backoff, errors. */
  reflector(name: string, status: ReflectorStatus): void;
  /** The Registry value was refused (once per distinct value); the last good one is served. */
  registryRejected(message: string): void;
  /** Newly referenced Secrets could not be fetched; they are served as unavailable until retried. */
  fetchFailed(count: number, message: string): void;
}

/** An observer that does nothing. */
export const silentObserver: MirrorObserver = {
  synced() {},
  registryAdopted() {},
  published() {},
  rebuildFailed() {},
  coalesced() {},
  ignored() {},
  contact() {},
  reflector() {},
  registryRejected() {},
  fetchFailed() {},
};
