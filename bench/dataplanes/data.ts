// What the data-plane suite saves (bench/results/dataplanes[.quick].json), read back by the report
// and the charts. Runs and CPU splits are keyed by `variantName` ("nginx alone", "caddy zero-hop").

import type { PlaneKind } from "../../test/support/data-plane.ts";
import type { RunResult } from "../rounds.ts";

/** One run's CPU per request, split between the proxy and its sidecar (hop and zero-hop). */
export interface CpuSplit {
  readonly proxyUs: number;
  readonly sidecarUs: number;
}

/** What one Registry size measured under load. */
export interface SizeData {
  /** By `variantName`: each round's run (the warm-up left out). */
  readonly runs: Record<string, RunResult[]>;
  /** By `variantName` of a hop or zero-hop variant: each round's CPU split. */
  readonly split: Record<string, CpuSplit[]>;
  /** By `variantName`: connections the upstream accepted per request it served (a probe run). */
  readonly upstreamConnectionsPerRequest: Record<string, number>;
  /** The hop sidecar's spawn to `/readyz` 200, ms. */
  readonly sidecarReadyMs: number;
  /**
   * By proxy: its zero-hop sidecar's spawn until the proxy holds the sidecar's revision, ms
   * (absent in results saved before zero-hop was measured).
   */
  readonly zeroHopTableMs?: Partial<Record<PlaneKind, number>>;
}

/** Write to answer: per variant, from just before each API write to the proxy's new answer. */
export interface WriteToAnswerData {
  readonly apps: number;
  /** What each write does. */
  readonly write: string;
  /** By `variantName` ("haproxy zero-hop", "nginx hop"): each write's time, ms. */
  readonly samples: Record<string, number[]>;
  /** By `variantName`: the untimed writes before them, timed all the same, ms. */
  readonly warmUp: Record<string, number[]>;
}

/** The suite's saved data (`bench/results/dataplanes.json`). */
export interface DataplanesData {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly load: string;
  readonly upstream: string;
  readonly versions: Record<PlaneKind, string>;
  /** By number of Apps: the load runs. */
  readonly sizes: Record<string, SizeData>;
  /** Absent in results saved before it was measured. */
  readonly writeToAnswer?: WriteToAnswerData;
}
