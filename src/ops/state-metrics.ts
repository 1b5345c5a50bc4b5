import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { MirrorObserver } from "../mirror/observer.ts";
import type { SnapshotSource } from "../snapshot/types.ts";

/** The state file's side of `/metrics`: loads, writes, and where the served Snapshot came from. */
export interface StateMetrics {
  /** How the start went with the state file: `loaded`, `off`, `no-key`, or why it was not used. */
  loaded(outcome: string): void;
  written(durationMs: number): void;
  failed(): void;
  /** Keeps the source gauges in step with the served Snapshot. */
  readonly observer: MirrorObserver;
}

const PREFIX = "replica_mirror_";
const WRITE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Registers the state file's metrics in `registry`; ages are read from `now` (seconds) when scraped. */
export function createStateMetrics(registry: Registry, now: () => number): StateMetrics {
  const registers = [registry];
  const loads = new Counter({
    name: `${PREFIX}state_loads_total`,
    help: "Starts by what the state file gave: loaded, off, no-key, or why it was not used (missing, corrupt, foreign-key, too-old, ...).",
    labelNames: ["outcome"] as const,
    registers,
  });
  const writes = new Counter({
    name: `${PREFIX}state_writes_total`,
    help: "State file writes, by result: written or failed.",
    labelNames: ["result"] as const,
    registers,
  });
  for (const result of ["written", "failed"]) writes.labels(result).inc(0);
  const duration = new Histogram({
    name: `${PREFIX}state_write_duration_seconds`,
    help: "Time to encrypt and write the state file.",
    buckets: WRITE_BUCKETS,
    registers,
  });
  let source: SnapshotSource | null = null;
  new Gauge({
    name: `${PREFIX}snapshot_source`,
    help: "1 for where the served Snapshot's inputs came from: api-server, or state-file after a warm start until the watches confirm it.",
    labelNames: ["source"] as const,
    registers,
    collect() {
      for (const kind of ["api-server", "state-file"])
        this.labels(kind).set(source?.kind === kind ? 1 : 0);
    },
  });
  new Gauge({
    name: `${PREFIX}state_age_seconds`,
    help: "Age of the state file the served Snapshot was built from; 0 when it came from the API server.",
    registers,
    collect() {
      this.set(source?.kind === "state-file" ? Math.max(0, now() - source.savedAt / 1000) : 0);
    },
  });
  return {
    loaded: (outcome) => loads.labels(outcome).inc(),
    written: (ms) => {
      writes.labels("written").inc();
      if (Number.isFinite(ms) && ms >= 0) duration.observe(ms / 1000);
    },
    failed: () => writes.labels("failed").inc(),
    observer: {
      published: ({ snapshot }) => {
        source = snapshot.source;
      },
    },
  };
}
