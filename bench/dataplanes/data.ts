// What the data-plane suite saves (bench/results/dataplanes[.quick].json), read back by the report
// and the charts. Runs and CPU splits are keyed by `variantName` ("nginx alone", "caddy zero-hop").

import type { PlaneKind } from "../../test/support/data-plane.ts";
import type { RunResult } from "../rounds.ts";
import type { TlsData } from "./tls-data.ts";

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
  /**
   * The credential sizes this size ran with on too (`credentialsName` keys in `runs` and `split`),
   * and the proxy alone beside them with a fixed `Authorization` of each (`headerName` keys in
   * `runs`, absent in results saved before it ran); absent when none, and in results saved before.
   */
  readonly credentialBytes?: readonly number[];
  /**
   * By `credentialsName`: the variants with credentials on left out, and why (a configuration
   * that does not serve an App with a credential yet).
   */
  readonly credentialsLeftOut?: Record<string, string>;
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

/** What the requests asked after a rotation's first answer with the new value got, summed. */
export interface AfterNewCounts {
  /** Requests sent after that first answer, within the check window. */
  readonly checked: number;
  /** Of those, answers whose upstream got the old value: must be 0. */
  readonly old: number;
  /** Answers with neither value (another status, no `Authorization`, another value). */
  readonly other: number;
  /** Requests whose connection failed (a reloading Caddy closes them). */
  readonly failed: number;
}

/**
 * Rotation: per variant, from just before an API write of an App's new credential value until
 * the upstream, behind the real proxy, got it as `Authorization`.
 */
export interface RotationData {
  readonly apps: number;
  /** How each rotation is made and timed. */
  readonly rotation: string;
  /** The bytes of every App's credential value (seeded and written). */
  readonly valueBytes: number;
  /** Connections asking for the App's host during each rotation (the timed one included). */
  readonly connections: number;
  /** How long they keep asking after the first answer with the new value, ms. */
  readonly checkMs: number;
  /** By `variantName` ("nginx hop", "caddy zero-hop"): each timed rotation, ms. */
  readonly samples: Record<string, number[]>;
  /** By `variantName`: the untimed rotations before them, timed all the same, ms. */
  readonly warmUp: Record<string, number[]>;
  /** By `variantName`: the requests asked after each first new answer, over every rotation. */
  readonly afterNew: Record<string, AfterNewCounts>;
  /** By `variantName`: the variants that could not be measured, and why. */
  readonly unmeasured: Record<string, string>;
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
  /** One per Registry size (10k, 100k Apps); absent in results saved before. */
  readonly writes?: readonly WriteToAnswerData[];
  /** The 10k one, in results saved before `writes`. */
  readonly writeToAnswer?: WriteToAnswerData;
  /** One per credential size; absent in results saved before rotation was measured. */
  readonly rotations?: readonly RotationData[];
  /** TLS by SNI, pushed against from files; absent in results saved before it was measured. */
  readonly tls?: TlsData;
  /** Each stage's wall-clock time, s, in order ("load 1k Apps", ...); absent before. */
  readonly stageSeconds?: Record<string, number>;
}

/** The write-to-answer runs of `data`, by Registry size, whichever way it was saved. */
export const writesOf = (data: DataplanesData): readonly WriteToAnswerData[] =>
  data.writes ?? (data.writeToAnswer === undefined ? [] : [data.writeToAnswer]);
