import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { PushObserver } from "../push/observer.ts";

const PREFIX = "replica_mirror_";
const PUSH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The zero-hop side of `/metrics`, by target (the proxy's name): pushes, their duration,
 * failures by operation and reason, tables a proxy lost or that changed behind the sidecar's
 * back, and the revision each proxy holds.
 */
export function createPushMetrics(registry: Registry): PushObserver {
  const registers = [registry];
  const pushes = new Counter({
    name: `${PREFIX}push_total`,
    help: "Routing tables pushed to a proxy and confirmed by it (zero-hop).",
    labelNames: ["target"] as const,
    registers,
  });
  const duration = new Histogram({
    name: `${PREFIX}push_duration_seconds`,
    help: "From the start of a push to the proxy confirming it answers from the new table.",
    labelNames: ["target"] as const,
    buckets: PUSH_BUCKETS,
    registers,
  });
  const failures = new Counter({
    name: `${PREFIX}push_failures_total`,
    help: "Pushes, version checks and verifications that failed, by operation (push, check, verify) and reason (unreachable, timeout, rejected, protocol).",
    labelNames: ["target", "operation", "reason"] as const,
    registers,
  });
  const lost = new Counter({
    name: `${PREFIX}proxy_tables_lost_total`,
    help: "Times a proxy held another table than the one pushed to it (it restarted or reloaded): pushed again.",
    labelNames: ["target"] as const,
    registers,
  });
  const drift = new Counter({
    name: `${PREFIX}proxy_drift_total`,
    help: "Times a proxy held other entries than those pushed to it, under the same revision (written behind the sidecar's back, or entries lost): pushed whole again.",
    labelNames: ["target"] as const,
    registers,
  });
  const revision = new Gauge({
    name: `${PREFIX}proxy_revision`,
    help: "The Snapshot revision whose table the proxy answers from; 0 while it holds none (it answers not-synced).",
    labelNames: ["target"] as const,
    registers,
  });
  return {
    pushed: (e) => {
      pushes.labels(e.target).inc();
      // At 0 from the first push: increase() in an alert sees no rise from a series that
      // appears at 1.
      drift.labels(e.target).inc(0);
      if (Number.isFinite(e.durationMs) && e.durationMs >= 0)
        duration.labels(e.target).observe(e.durationMs / 1000);
    },
    failed: (e) => failures.labels(e.target, e.operation, e.reason).inc(),
    lost: (e) => lost.labels(e.target).inc(),
    drifted: (e) => drift.labels(e.target).inc(),
    held: (e) => revision.labels(e.target).set(e.revision ?? 0),
  };
}
