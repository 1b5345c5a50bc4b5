// The suite's raw output: one JSON file per scenario and label (`steady-latest.json`), written by
// a run and read back by the report and the charts. Everything a table or chart shows is here.

import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

/** Smallest, median and largest of a per-replica figure. */
export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

/** What the whole fleet cost the API server in one phase. */
export interface FleetTotals {
  readonly requests: number;
  readonly byVerb: Readonly<Record<string, number>>;
  /**
   * List requests (pages); list starts (a paged list's first page, or a streaming list: one per
   * list), and the starts on App Secrets.
   */
  readonly listPages: number;
  readonly listStarts: number;
  /** Lists of App Secrets by namespace or cluster (not the Registry, not one name). */
  readonly secretListStarts: number;
  /** Lists selecting one App Secret by name: fetches under a label selector. */
  readonly namedListStarts?: number;
  /** Pages read from the watch cache, consistently (etcd), or at an exact version. */
  readonly listReads: Readonly<Record<string, number>>;
  readonly listObjects: number;
  readonly watches: number;
  /** Watches served as streaming lists, and streaming lists refused with 422 (absent before ADR 57). */
  readonly streamedLists?: number;
  readonly refusedStreams?: number;
  readonly gets: number;
  /** Objects and body bytes sent (list items, watch events, GETs). */
  readonly objects: number;
  readonly bytes: number;
  /** 410s: watch ERROR events and HTTP answers. */
  readonly expired: number;
  readonly throttled: number;
  readonly serverErrors: number;
  /** Requests whose connection closed before any answer (a client gave up, a restart cut it). */
  readonly unanswered: number;
  /** The server's own count: list requests (pages) being answered at once. */
  readonly peakListsInFlight: number;
  /** Paged lists from first page to last, in progress at once. */
  readonly peakListsInProgress: number;
}

/** The same figures per replica. */
export type PerReplica = Readonly<
  Record<
    | "requests"
    | "listPages"
    | "listStarts"
    | "listObjects"
    | "watches"
    | "gets"
    | "objects"
    | "bytes"
    | "expired"
    | "throttled",
    Spread
  >
>;

/** One of the targets, as measured. */
export interface Target {
  readonly what: string;
  readonly target: string;
  readonly figure: string;
  readonly met: boolean;
}

/** Requests that arrived in one second of the phase, by verb. */
export interface SecondRow {
  /** Seconds since the phase started. */
  readonly t: number;
  readonly byVerb: Readonly<Record<string, number>>;
}

/** One measured phase of a scenario. */
export interface PhaseResult {
  /** Short and stable: chart file names and before/after matching use it. */
  readonly key: string;
  readonly name: string;
  readonly replicas: number;
  /** Milliseconds since the epoch. */
  readonly startedAt: number;
  readonly durationMs: number;
  readonly fleet: FleetTotals;
  readonly perReplica: PerReplica;
  /** Per replica, from the phase's action to the expected state; null when none converged. */
  readonly convergeMs: Spread | null;
  readonly converged: number;
  readonly perSecond: readonly SecondRow[];
  /**
   * The API server process's event loop busy share and CPU time over the phase; its resident
   * memory as the phase began and at its peak (sampled every 100 ms), and that growth per replica
   * (absent in results saved before).
   */
  readonly apiServer: {
    readonly eventLoopBusy: number;
    readonly cpuMs: number;
    readonly rssBeforeMiB?: number;
    readonly rssPeakMiB?: number;
    readonly peakPerReplicaKiB?: number;
  };
  /** The machine's one-minute load average as the phase ended (the machine is shared). */
  readonly loadAverage: number;
  /** Figures of this scenario only (bytes of the added Secrets, the largest relist window...). */
  readonly facts: Readonly<Record<string, number | string | null>>;
  readonly targets: readonly Target[];
}

/** The single replica's memory during its initial list. */
export interface MemoryResult {
  readonly secrets: number;
  readonly peakRssBytes: number;
  /** The kernel's own high-water mark (VmHWM) at the end. */
  readonly hwmBytes: number;
  /** RSS as the kernel sees it once the replica sat idle a while after sync. */
  readonly rssIdleBytes: number;
  /** RSS and heap after full collections, once synced: what the replica holds. */
  readonly rssAfterSyncBytes: number;
  readonly heapAfterSyncBytes: number;
  readonly syncMs: number | null;
  /** RSS samples: ms since the spawn, bytes. */
  readonly samples: readonly { readonly t: number; readonly rss: number }[];
  readonly targets: readonly Target[];
}

/** One scenario's output file. */
export interface ScenarioResult {
  readonly scenario: string;
  readonly label: string;
  /** The commit the sidecar was built from, and whether the tree had changes. */
  readonly commit: string;
  readonly startedAt: string;
  readonly machine: string;
  readonly config: Readonly<Record<string, number | string | boolean>>;
  readonly phases: readonly PhaseResult[];
  readonly memory?: MemoryResult;
}

/** Writes `<scenario>-<label>.json`; returns its path. */
export async function writeResult(r: ScenarioResult, dir = RESULTS_DIR): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${r.scenario}-${r.label}.json`);
  await writeFile(path, `${JSON.stringify(r, null, 1)}\n`);
  return path;
}

/** Reads `<scenario>-<label>.json`, or undefined when there is none. */
export async function readResult(
  scenario: string,
  label: string,
  dir = RESULTS_DIR,
): Promise<ScenarioResult | undefined> {
  try {
    return JSON.parse(
      await readFile(join(dir, `${scenario}-${label}.json`), "utf8"),
    ) as ScenarioResult;
  } catch {
    return undefined;
  }
}
