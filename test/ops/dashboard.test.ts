import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Envtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { get } from "../support/http.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { findTool, type Tool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import { envtestFor, writeRegistry } from "../support/world.ts";
import {
  dashboardExpressions,
  exposedNames,
  loadDashboard,
  loadRules,
  metricNames,
  variableSelectors,
  withoutGrafanaVariables,
} from "./promql.ts";

const promtool = findTool(
  "prometheus",
  ["/usr/bin/promtool", "/usr/local/bin/promtool"],
  ["--version"],
);
const skipped = (tool: Tool) => (tool.path === undefined ? `, ${tool.missing}` : "");
const dashboard = loadDashboard();
const panels = dashboardExpressions(dashboard);
const alerts = loadRules().groups.flatMap((g) => g.rules);

let envtest: Envtest;
let sidecar: TestSidecar;
let exposed: Set<string>;

beforeAll(async () => {
  envtest = await envtestFor();
  writeRegistry(envtest, [{ name: "shop", hostnames: ["shop.example.com"] }]);
  sidecar = await startTestSidecar(envtest);
  await waitUntil(() => sidecar.holder.current() !== null, { what: "the first Snapshot" });
  exposed = exposedNames((await get(sidecar.ops.port, "/metrics")).body);
});

afterAll(async () => {
  await sidecar?.stop();
  await envtest?.close();
});

describe("metricNames", () => {
  it("keeps metric names and drops functions, labels, keywords, strings and durations", () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, kind) (rate(a_bucket{x=~"$y"}[$__rate_interval])))' +
          " / on (pod) group_left b_total offset 5m > bool 0.5 and c",
      ),
    ).toEqual(["a_bucket", "b_total", "c"]);
  });
});

describe("manifests/overlays/monitoring/dashboard.json", () => {
  it("shows what an operator watches: answers, rebuilds, latency, staleness, watches, memory", () => {
    const queried = new Set(panels.flatMap((p) => metricNames(p.expr)));
    for (const name of [
      "replica_mirror_route_answers_total",
      "replica_mirror_rebuilds_total",
      "replica_mirror_rebuild_duration_seconds_bucket",
      "replica_mirror_event_to_swap_seconds_bucket",
      "replica_mirror_last_contact_age_seconds",
      "replica_mirror_snapshot_age_seconds",
      "replica_mirror_watch_restarts_total",
      "replica_mirror_relists_total",
      "process_resident_memory_bytes",
    ]) {
      expect(queried.has(name), name).toBe(true);
    }
  });

  it("queries only metrics the sidecar's /metrics exposes", () => {
    const queries = [
      ...panels.map((p) => ({ where: `panel "${p.panel}"`, expr: p.expr })),
      ...variableSelectors(dashboard).map((expr) => ({ where: "a template variable", expr })),
    ];
    const unknown = queries.flatMap((q) =>
      metricNames(q.expr)
        .filter((name) => !exposed.has(name))
        .map((name) => `${q.where}: ${name}`),
    );
    expect(unknown).toEqual([]);
    expect(variableSelectors(dashboard).length).toBeGreaterThan(0);
  });

  // Skipped only where promtool is missing; .ci/run installs it (Debian's prometheus package).

  it.skipIf(promtool.path === undefined)(
    `has expressions Prometheus parses (promtool check rules)${skipped(promtool)}`,
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "replica-mirror-dashboard-"));
      try {
        const rules = panels.map((p, i) => ({
          record: `dashboard:expression_${i}`,
          expr: withoutGrafanaVariables(p.expr),
        }));
        const file = join(dir, "dashboard-rules.yaml");
        await writeFile(file, stringify({ groups: [{ name: "dashboard", rules }] }));
        const out = execFileSync(promtool.path!, ["check", "rules", file], { encoding: "utf8" });
        expect(out).toContain(`SUCCESS: ${rules.length} rules found`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("manifests/overlays/monitoring/rules.yaml", () => {
  it("alerts only on metrics the sidecar's /metrics exposes", () => {
    const unknown = alerts.flatMap((rule) =>
      metricNames(rule.expr)
        .filter((name) => !exposed.has(name))
        .map((name) => `${rule.alert}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});
