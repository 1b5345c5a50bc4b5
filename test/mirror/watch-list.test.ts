// A sidecar's start against servers with and without streaming lists (ADR 57): what it asks the
// API server for, what it tells the operator, and that it serves the same either way.

import type { Envtest } from "@replica-mirror/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { get, metricValue } from "../support/http.ts";
import { appState, startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import { envtestFor, writeRegistry, writeSecret } from "../support/world.ts";

let envtest: Envtest;
let sidecar: TestSidecar | undefined;

const apps = [
  { name: "shop", hostnames: ["shop.example.com"], namespace: "tenant-a", credential: {} },
  { name: "blog", hostnames: ["blog.example.com"], namespace: "tenant-b", credential: {} },
];

beforeEach(async () => {
  envtest = await envtestFor();
  writeSecret(envtest, "tenant-a", "shop-credentials", { token: "a1" });
  writeSecret(envtest, "tenant-b", "blog-credentials", { token: "b1" });
  writeSecret(envtest, "tenant-b", "unrelated", { token: "x" });
  writeRegistry(envtest, apps);
});
afterEach(async () => {
  await sidecar?.stop();
  sidecar = undefined;
  await envtest.close();
});

/** Starts a sidecar logging at info; resolves once it serves both Apps. */
async function started(): Promise<TestSidecar> {
  // Credentials served: the mirror keeps the values the figures show (ADR 68).
  sidecar = await startTestSidecar(envtest, {
    logLevel: "info",
    flags: ["--serve-credentials", "true"],
  });
  const m = sidecar;
  await waitUntil(() => m.holder.current() ?? undefined, { what: "first Snapshot" });
  return m;
}

/** What a start cost and showed: Secret requests by verb, the Apps, the metric, the log. */
async function startFigures(m: TestSidecar) {
  const secrets = envtest.requests.summary().byResource.secrets ?? {};
  const metrics = (await get(m.ops.port, "/metrics")).body;
  const lists = (mode: string) =>
    ["registry", "secrets/*"].map((reflector) =>
      metricValue(metrics, "replica_mirror_lists_total", { reflector, mode }),
    );
  const refusals = m
    .lines()
    .filter((l) => l.includes("refuses streaming lists"))
    .map((l) => (JSON.parse(l) as { reflector: string }).reflector);
  return {
    lists: secrets.list?.requests ?? 0,
    streamedLists: secrets.watch?.streamedLists ?? 0,
    refusedWatches: secrets.watch?.statuses[422] ?? 0,
    apps: [appState(m.holder, "shop"), appState(m.holder, "blog")],
    metric: { "watch-list": lists("watch-list"), list: lists("list") },
    refusals,
  };
}

const READY = (value: string) => ({ ready: true, value, reason: null });

describe("streaming lists at start", () => {
  it("makes no LIST request: each reflector's initial list is streamed", async () => {
    const m = await started();
    expect(await startFigures(m)).toEqual({
      lists: 0,
      streamedLists: 2,
      refusedWatches: 0,
      apps: [READY("a1"), READY("b1")],
      metric: { "watch-list": [1, 1], list: [undefined, undefined] },
      refusals: [],
    });
  });

  it("falls back to paged lists when the WatchList feature gate is off, says so once, and serves the same", async () => {
    envtest.setFeatureGates({ WatchList: false });
    const m = await started();
    // The Registry's reflector learns it; the App Secrets' reflector, started after, lists at once.
    expect(await startFigures(m)).toEqual({
      lists: 2,
      streamedLists: 0,
      refusedWatches: 1,
      apps: [READY("a1"), READY("b1")],
      metric: { "watch-list": [undefined, undefined], list: [1, 1] },
      refusals: ["registry"],
    });
  });
});
