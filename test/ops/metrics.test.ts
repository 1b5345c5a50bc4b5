import { describe, expect, it } from "vitest";
import { ROUTE_OUTCOMES } from "../../src/answers/reasons.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { BUILT_AT, snapshotOf } from "../support/world.ts";

const START = BUILT_AT / 1000 - 30;

function metricsAt() {
  const clock = { now: START };
  const metrics = createMetrics({ now: () => clock.now });
  const lines = async () => (await metrics.registry.metrics()).split("\n");
  return { clock, metrics, lines };
}

const snapshot = snapshotOf(
  [
    { name: "shop", hostnames: ["shop.example.com", "*.shop.example.com"] },
    { name: "shop-eu", hostnames: ["shop.example.com"] },
  ],
  { "shop-credentials": { token: "t" } },
  7,
);

describe("createMetrics", () => {
  it("starts with every route outcome and rebuild kind at zero, unsynced", async () => {
    const { lines } = metricsAt();
    expect(await lines()).toEqual(
      expect.arrayContaining([
        ...ROUTE_OUTCOMES.map((o) => `replica_mirror_route_answers_total{outcome="${o}"} 0`),
        'replica_mirror_rebuilds_total{kind="whole"} 0',
        'replica_mirror_rebuilds_total{kind="secrets"} 0',
        "replica_mirror_synced 0",
        "replica_mirror_snapshot_revision 0",
      ]),
    );
  });

  it("counts route answers by outcome", async () => {
    const { metrics, lines } = metricsAt();
    metrics.routeCounts.add("routed");
    metrics.routeCounts.add("routed");
    metrics.routeCounts.add("bad-host");
    const out = await lines();
    expect(out).toContain('replica_mirror_route_answers_total{outcome="routed"} 2');
    expect(out).toContain('replica_mirror_route_answers_total{outcome="bad-host"} 1');
    expect(out).toContain('replica_mirror_route_answers_total{outcome="unknown-host"} 0');
    // A second scrape reports the same totals, not the increments since the first.
    expect(await lines()).toContain('replica_mirror_route_answers_total{outcome="routed"} 2');
  });

  it("describes a published Snapshot and its cost", async () => {
    const { metrics, lines } = metricsAt();
    metrics.observer.synced();
    metrics.observer.published({ snapshot, kind: "secrets", buildMs: 12, eventToSwapMs: 3 });
    expect(await lines()).toEqual(
      expect.arrayContaining([
        'replica_mirror_rebuilds_total{kind="secrets"} 1',
        'replica_mirror_rebuild_duration_seconds_bucket{le="0.01",kind="secrets"} 0',
        'replica_mirror_rebuild_duration_seconds_bucket{le="0.025",kind="secrets"} 1',
        'replica_mirror_rebuild_duration_seconds_sum{kind="secrets"} 0.012',
        'replica_mirror_event_to_swap_seconds_bucket{le="0.0001"} 0',
        'replica_mirror_event_to_swap_seconds_bucket{le="0.0025"} 0',
        'replica_mirror_event_to_swap_seconds_bucket{le="0.005"} 1',
        'replica_mirror_event_to_swap_seconds_bucket{le="10"} 1',
        "replica_mirror_event_to_swap_seconds_count 1",
        "replica_mirror_snapshot_revision 7",
        "replica_mirror_snapshot_apps 2",
        "replica_mirror_snapshot_ready_apps 1",
        "replica_mirror_snapshot_hostnames 2",
        "replica_mirror_snapshot_conflicts 1",
        "replica_mirror_synced 1",
      ]),
    );
  });

  it("sums the certificate gauges when scraped, not as each Snapshot is published (ADR 72)", async () => {
    const { metrics, lines } = metricsAt();
    let walks = 0;
    const apps = new Proxy(snapshot.apps, {
      get(target, key) {
        if (key === "chunks") walks++;
        return Reflect.get(target, key);
      },
    });
    const published = { ...snapshot, apps };
    for (const revision of [8, 9, 10])
      metrics.certificates.published?.({
        snapshot: { ...published, revision },
        kind: "secrets",
        buildMs: 1,
        eventToSwapMs: 1,
      });
    expect(walks).toBe(0);
    expect(await lines()).toEqual(
      expect.arrayContaining([
        'replica_mirror_certificates{state="served"} 0',
        'replica_mirror_certificates{state="refused"} 0',
        'replica_mirror_certificates{state="off"} 0',
      ]),
    );
    expect(walks).toBe(1);
  });

  it("leaves event-to-swap alone for the first Snapshot, which reflects no event", async () => {
    const { metrics, lines } = metricsAt();
    metrics.observer.published({ snapshot, kind: "whole", buildMs: 1, eventToSwapMs: null });
    expect(await lines()).toContain("replica_mirror_event_to_swap_seconds_count 0");
  });

  it("computes the Snapshot's age and the time since contact when scraped", async () => {
    const { clock, metrics, lines } = metricsAt();
    clock.now = START + 12;
    // Nothing yet: both count from start.
    expect(await lines()).toEqual(
      expect.arrayContaining([
        "replica_mirror_snapshot_age_seconds 12",
        "replica_mirror_last_contact_age_seconds 12",
      ]),
    );
    metrics.observer.contact();
    metrics.observer.published({ snapshot, kind: "whole", buildMs: 1, eventToSwapMs: null });
    clock.now = BUILT_AT / 1000 + 45;
    expect(await lines()).toEqual(
      expect.arrayContaining([
        "replica_mirror_snapshot_age_seconds 45",
        "replica_mirror_last_contact_age_seconds 63",
      ]),
    );
  });

  it("counts what reflectors report, by reflector and reason or phase", async () => {
    const { metrics, lines } = metricsAt();
    const { reflector } = metrics.observer;
    reflector("secrets", {
      kind: "listed",
      mode: "list",
      resourceVersion: "5",
      items: 3,
      pages: 1,
    });
    reflector("registry", { kind: "listed", mode: "watch-list", resourceVersion: "6", items: 1 });
    reflector("secrets", {
      kind: "watch-restart",
      reason: "timeout",
      resourceVersion: "5",
      events: 2,
    });
    reflector("secrets", {
      kind: "watch-restart",
      reason: "timeout",
      resourceVersion: "6",
      events: 0,
    });
    reflector("registry", {
      kind: "watch-restart",
      reason: "expired",
      resourceVersion: "1",
      events: 0,
    });
    reflector("registry", { kind: "relist", reason: "expired" });
    reflector("registry", { kind: "backoff", delayMs: 800 });
    reflector("secrets", {
      kind: "error",
      phase: "watch",
      error: { kind: "bug", message: "x" },
    });
    reflector("secrets", { kind: "handler-error", event: "ADDED", error: new Error("x") });
    expect(await lines()).toEqual(
      expect.arrayContaining([
        'replica_mirror_lists_total{reflector="secrets",mode="list"} 1',
        'replica_mirror_lists_total{reflector="registry",mode="watch-list"} 1',
        'replica_mirror_watch_restarts_total{reflector="secrets",reason="timeout"} 2',
        'replica_mirror_watch_restarts_total{reflector="registry",reason="expired"} 1',
        'replica_mirror_relists_total{reflector="registry",reason="expired"} 1',
        'replica_mirror_reflector_errors_total{reflector="secrets",phase="watch"} 1',
        'replica_mirror_reflector_errors_total{reflector="secrets",phase="handler"} 1',
      ]),
    );
  });

  it("counts failures, coalesced signals and ignored events", async () => {
    const { metrics, lines } = metricsAt();
    const o = metrics.observer;
    o.rebuildFailed(new Error("bug"));
    o.coalesced(4);
    o.coalesced(0);
    o.ignored();
    o.ignored();
    o.registryRejected("apps[0].name: required");
    o.fetchFailed(3, "forbidden");
    expect(await lines()).toEqual(
      expect.arrayContaining([
        "replica_mirror_rebuild_failures_total 1",
        "replica_mirror_coalesced_signals_total 4",
        "replica_mirror_ignored_events_total 2",
        "replica_mirror_registry_parse_errors_total 1",
        "replica_mirror_fetch_failures_total 3",
      ]),
    );
  });

  it("never throws on values prom-client would refuse", async () => {
    const { metrics, lines } = metricsAt();
    const o = metrics.observer;
    expect(() => {
      o.coalesced(Number.NaN);
      o.coalesced(-1);
      o.fetchFailed(Number.POSITIVE_INFINITY, "x");
      o.published({ snapshot, kind: "whole", buildMs: Number.NaN, eventToSwapMs: -5 });
    }).not.toThrow();
    expect(await lines()).toEqual(
      expect.arrayContaining([
        "replica_mirror_coalesced_signals_total 0",
        "replica_mirror_fetch_failures_total 0",
        'replica_mirror_rebuilds_total{kind="whole"} 1',
        'replica_mirror_rebuild_duration_seconds_count{kind="whole"} 0',
        "replica_mirror_event_to_swap_seconds_count 0",
      ]),
    );
  });

  it("keeps instances apart, each with its own registry and process metrics", async () => {
    const a = metricsAt();
    const b = metricsAt();
    a.metrics.routeCounts.add("routed");
    expect(await a.lines()).toContain('replica_mirror_route_answers_total{outcome="routed"} 1');
    expect(await b.lines()).toContain('replica_mirror_route_answers_total{outcome="routed"} 0');
    expect(await b.lines()).toContain("# TYPE process_resident_memory_bytes gauge");
  });
});
