import type { ReflectorStatus } from "../kube/cache/reflector-status.ts";
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
 * What the mirror tells its telemetry (metrics, logs): what consumes a Snapshot is a sink
 * (sink.ts). Called synchronously from the mirror; an observer implements the calls it cares
 * about, must not throw, and is never handed Secret bytes (none of these carry any).
 */
export interface MirrorObserver {
  /** Both watches listed and the first Snapshot is about to be published. */
  synced?(): void;
  published?(publication: Publication): void;
  /** A rebuild threw: a bug, reported and survived; the previous Snapshot stays. */
  rebuildFailed?(error: unknown): void;
  /** A Registry adoption threw: a bug, reported and survived; the Registry served stays. */
  adoptionFailed?(error: unknown): void;
  /** Signals absorbed by a run (a rebuild or a Registry adoption) that another signal started. */
  coalesced?(count: number): void;
  /** An event for a Secret no App references: dropped, no rebuild. */
  ignored?(): void;
  /** The API server was heard from: a list, an event, a bookmark, or a watch that ended on time. */
  contact?(): void;
  /** A reflector's own report: restarts, relists, backoff, errors. */
  reflector?(name: string, status: ReflectorStatus): void;
  /** The Registry value was refused (once per distinct value); the last good one is served. */
  registryRejected?(message: string): void;
  /** Newly referenced Secrets could not be fetched; they are served as unavailable until retried. */
  fetchFailed?(count: number, message: string): void;
}

type Call = keyof MirrorObserver;

/** One observer made of several: each call goes to every observer that implements it, in order. */
export function observeAll(...observers: readonly MirrorObserver[]): Required<MirrorObserver> {
  const each =
    <K extends Call>(key: K) =>
    (...args: Parameters<Required<MirrorObserver>[K]>): void => {
      for (const o of observers) (o[key] as ((...a: typeof args) => void) | undefined)?.(...args);
    };
  return {
    synced: each("synced"),
    published: each("published"),
    rebuildFailed: each("rebuildFailed"),
    adoptionFailed: each("adoptionFailed"),
    coalesced: each("coalesced"),
    ignored: each("ignored"),
    contact: each("contact"),
    reflector: each("reflector"),
    registryRejected: each("registryRejected"),
    fetchFailed: each("fetchFailed"),
  };
}
