import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { ROUTE_OUTCOMES } from "../answers/reasons.ts";
import type { ReflectorStatus } from "../kube/cache/reflector-status.ts";
import type { MirrorObserver, Publication } from "../mirror/observer.ts";
import { RouteCounts } from "../route/route-counts.ts";
import { certificateMetrics } from "./certificate-metrics.ts";
import { createStateMetrics, type StateMetrics } from "./state-metrics.ts";

/** The Prometheus side of the mirror: what `/metrics` serves. */
export interface Metrics {
  /** This instance's own registry, never prom-client's global one. */
  readonly registry: Registry;
  /** Feeds the mirror's reports into the metrics; never throws. */
  readonly observer: Required<MirrorObserver>;
  /** The route answer counts, which the data thread adds to as well. */
  readonly routeCounts: RouteCounts;
  /** The state file's loads and writes, and where the served Snapshot came from. */
  readonly state: StateMetrics;
  /** Keeps the certificate gauges in step with the served Snapshot (ADR 56). */
  readonly certificates: MirrorObserver;
  /** Where the data thread's heap is read at each scrape; unset, it reads 0. */
  dataThreadHeap(read: () => Promise<DataThreadHeap | null>): void;
}

/** The data thread's V8 heap, in bytes. */
export interface DataThreadHeap {
  readonly used: number;
  readonly total: number;
}

interface MetricsOptions {
  /** Wall-clock seconds (fractions allowed); ages are computed from it when scraped. */
  readonly now?: () => number;
}

const PREFIX = "replica_mirror_";
/** How often the main thread's event loop delay is sampled (`nodejs_eventloop_lag_*`). */
const EVENT_LOOP_MONITORING_MS = 100;

// From a swap of a few Apps (tens of microseconds) to a stalled rebuild of a large Registry.
const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * Creates the metrics with their own registry (so tests may create many), the default process
 * metrics, and an observer for the mirror. Ages are measured from creation until the first
 * Snapshot or API contact, so an alert on age also fires for a replica that never synced.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const now = options.now ?? (() => Date.now() / 1000);
  const startedAt = now();
  const registry = new Registry();
  // The event loop delay histogram samples the main thread's loop with a timer: every 10 ms by
  // default, 100 wake-ups a second that preempt the data thread on a small node (ADR 29).
  collectDefaultMetrics({
    register: registry,
    eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS,
  });
  const registers = [registry];

  let builtAt: number | null = null;
  let lastContact: number | null = null;

  const rebuilds = new Counter({
    name: `${PREFIX}rebuilds_total`,
    help: "Snapshots published, by kind: whole (Registry changed) or secrets (only Secrets changed).",
    labelNames: ["kind"] as const,
    registers,
  });
  const rebuildDuration = new Histogram({
    name: `${PREFIX}rebuild_duration_seconds`,
    help: "Time to build a Snapshot, by kind.",
    labelNames: ["kind"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  for (const kind of ["whole", "secrets"]) {
    rebuilds.labels(kind).inc(0);
    rebuildDuration.zero({ kind });
  }
  const rebuildFailures = counter("rebuild_failures_total", "Rebuilds that threw (a bug).");
  const adoptionFailures = counter(
    "adoption_failures_total",
    "Registry adoptions that threw (a bug).",
  );
  const coalesced = counter(
    "coalesced_signals_total",
    "Change signals absorbed by a rebuild already pending.",
  );
  const eventToSwap = new Histogram({
    name: `${PREFIX}event_to_swap_seconds`,
    help: "From receiving the oldest change a Snapshot reflects to its swap.",
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const revision = gauge(
    "snapshot_revision",
    "Revision of the served Snapshot; 0 before the first.",
  );
  const apps = gauge("snapshot_apps", "Apps in the served Snapshot.");
  const readyApps = gauge("snapshot_ready_apps", "Apps whose Secret bytes this replica has.");
  const hostnames = gauge("snapshot_hostnames", "Hostnames and patterns in the served Snapshot.");
  const conflicts = gauge("snapshot_conflicts", "Hostnames claimed by more than one App.");
  const refusedApps = gauge(
    "registry_refused_apps",
    "App entries of the latest Registry value that were refused; each keeps its last good version.",
  );
  const registryInfo = new Gauge({
    name: `${PREFIX}registry_info`,
    help: "1 for the Registry the served Snapshot was built from: its resourceVersion and a digest of its bytes (the same on every replica that serves it).",
    labelNames: ["resource_version", "content_hash"] as const,
    registers,
  });
  const synced = gauge("synced", "1 once the first Snapshot is published, else 0.");
  new Gauge({
    name: `${PREFIX}snapshot_age_seconds`,
    help: "Seconds since the served Snapshot was built (since start while none is published).",
    registers,
    collect() {
      this.set(Math.max(0, now() - (builtAt === null ? startedAt : builtAt / 1000)));
    },
  });
  new Gauge({
    name: `${PREFIX}last_contact_age_seconds`,
    help: "Seconds since the API server was last heard from: a list, an event, a bookmark, or a watch that ended on time (since start if never).",
    registers,
    collect() {
      this.set(Math.max(0, now() - (lastContact ?? startedAt)));
    },
  });
  const lists = labelled(
    "lists_total",
    "Complete lists, the first included, by mode: watch-list (streamed) or list (paged).",
    ["reflector", "mode"],
  );
  const watchRestarts = labelled("watch_restarts_total", "Watches reopened, by reason.", [
    "reflector",
    "reason",
  ]);
  const relists = labelled("relists_total", "Lists started again after the first, by reason.", [
    "reflector",
    "reason",
  ]);
  const reflectorErrors = labelled(
    "reflector_errors_total",
    "Reflector errors, by phase: list, watch, internal, or handler (a store update threw).",
    ["reflector", "phase"],
  );
  const ignored = counter("ignored_events_total", "Events for Secrets no App references.");
  const registryParseErrors = counter(
    "registry_parse_errors_total",
    "Registry values refused (once per distinct value); the last good one is served.",
  );
  const fetchFailures = counter(
    "fetch_failures_total",
    "Newly referenced Secrets that could not be fetched.",
  );

  // Shared cells on the hot path: a prom-client child hashes its labels on every inc.
  const routeCounts = new RouteCounts();
  new Counter({
    name: `${PREFIX}route_answers_total`,
    help: "Answers of /v1/route, by outcome.",
    labelNames: ["outcome"] as const,
    registers,
    collect() {
      this.reset();
      const totals = routeCounts.totals();
      for (const outcome of ROUTE_OUTCOMES) this.labels(outcome).inc(totals[outcome]);
    },
  });

  function counter(name: string, help: string): Counter {
    return new Counter({ name: `${PREFIX}${name}`, help, registers });
  }
  function gauge(name: string, help: string): Gauge {
    return new Gauge({ name: `${PREFIX}${name}`, help, registers });
  }
  function labelled<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
    return new Counter({ name: `${PREFIX}${name}`, help, labelNames, registers });
  }

  const observer: Required<MirrorObserver> = {
    synced() {
      synced.set(1);
    },
    published(publication: Publication) {
      const { snapshot, kind } = publication;
      rebuilds.labels(kind).inc();
      if (isDuration(publication.buildMs)) {
        rebuildDuration.labels(kind).observe(publication.buildMs / 1000);
      }
      if (publication.eventToSwapMs !== null && isDuration(publication.eventToSwapMs)) {
        eventToSwap.observe(publication.eventToSwapMs / 1000);
      }
      builtAt = snapshot.builtAt;
      revision.set(snapshot.revision);
      apps.set(snapshot.apps.size);
      readyApps.set(snapshot.apps.readyCount);
      hostnames.set(snapshot.routes.hostnameCount);
      conflicts.set(snapshot.routes.conflicts.length);
      refusedApps.set(snapshot.registry.refusedApps.length);
      registryInfo.reset();
      registryInfo
        .labels(snapshot.registry.resourceVersion ?? "", snapshot.registry.contentHash ?? "")
        .set(1);
      synced.set(1);
    },
    rebuildFailed() {
      rebuildFailures.inc();
    },
    adoptionFailed() {
      adoptionFailures.inc();
    },
    coalesced(count: number) {
      if (isCount(count)) coalesced.inc(count);
    },
    ignored() {
      ignored.inc();
    },
    contact() {
      lastContact = now();
    },
    reflector(name: string, status: ReflectorStatus) {
      switch (status.kind) {
        case "listed":
          lists.labels(name, status.mode).inc();
          return;
        case "watch-restart":
          watchRestarts.labels(name, status.reason).inc();
          return;
        case "relist":
          relists.labels(name, status.reason).inc();
          return;
        case "error":
          reflectorErrors.labels(name, status.phase).inc();
          return;
        case "handler-error":
          reflectorErrors.labels(name, "handler").inc();
          return;
        case "backoff":
        case "streaming-refused":
          return;
      }
    },
    registryRejected() {
      registryParseErrors.inc();
    },
    fetchFailed(count: number) {
      if (isCount(count)) fetchFailures.inc(count);
    },
  };

  // The default `nodejs_heap_*` metrics are the main thread's; the data thread's heap is its own.
  let readDataThreadHeap: () => Promise<DataThreadHeap | null> = () => Promise.resolve(null);
  const dataThreadHeap = (field: keyof DataThreadHeap, help: string) =>
    new Gauge({
      name: `${PREFIX}data_thread_heap_${field}_bytes`,
      help,
      registers,
      async collect() {
        const heap = await readDataThreadHeap();
        this.set(heap === null ? 0 : heap[field]);
      },
    });
  dataThreadHeap(
    "used",
    "V8 heap used by the data thread (the data listener's isolate); 0 without one.",
  );
  dataThreadHeap(
    "total",
    "V8 heap the data thread holds (the data listener's isolate); 0 without one.",
  );

  return {
    registry,
    observer,
    routeCounts,
    state: createStateMetrics(registry, now),
    certificates: certificateMetrics(registry),
    dataThreadHeap(read) {
      readDataThreadHeap = read;
    },
  };
}

// prom-client throws on a non-finite or negative value; an observer must not.
function isDuration(ms: number): boolean {
  return Number.isFinite(ms) && ms >= 0;
}

function isCount(n: number): boolean {
  return Number.isFinite(n) && n > 0;
}
