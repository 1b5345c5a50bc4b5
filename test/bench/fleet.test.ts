// The fleet suite (`npm run fleet`, bench/fleet) at a tiny size, so that a change to the sidecar's
// flags, logs or status API that would break the harness shows up in `npm test` rather than at the
// next 20-minute run. The figures themselves are not judged here: only that the harness measures.
// The replicas run a bundle built for the test, as the suite runs dist/: from the sources a
// replica spent about 0.9 s loading them (the bundle 0.15 s), and the smoke took twice as long.

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { type FleetConfig, parseFleetArgs } from "../../bench/fleet/options.ts";
import { renderReport } from "../../bench/fleet/report.ts";
import { runSuite } from "../../bench/fleet/suite.ts";

let dir = "";
afterAll(async () => {
  if (dir !== "") await rm(dir, { recursive: true, force: true });
});

function tinyConfig(resultsDir: string, entry: string): FleetConfig {
  const parsed = parseFleetArgs([
    ...["--replicas", "3", "--apps", "20", "--added", "10", "--secrets", "100"],
    ...["--scenario", "watchlist,registry,restart", "--restart-down-ms", "300"],
    ...["--converge-timeout", "20", "--settle-ms", "200"],
    ...["--artifact", "src", "--label", "smoke"],
  ]);
  if (typeof parsed === "string") throw new Error(parsed);
  return { ...parsed, resultsDir, entry };
}

describe("npm run fleet", () => {
  it("measures three replicas through cold starts and rolling restarts both ways, Registry edits and an API-server restart", async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-fleet-test-"));
    const dist = join(dir, "dist");
    await promisify(execFile)(process.execPath, ["scripts/build.ts", "--outdir", dist]);
    const results = await runSuite(tinyConfig(dir, join(dist, "main.mjs")), () => {});

    expect(results.map((r) => [r.scenario, r.phases.map((p) => p.key)])).toEqual([
      [
        "watchlist",
        [
          "cold-start-streaming",
          "rolling-restart-streaming",
          "cold-start-gate-off",
          "rolling-restart-gate-off",
        ],
      ],
      [
        "registry",
        ["registry-add", "registry-remove", "registry-add-selector", "registry-remove-selector"],
      ],
      ["restart", ["api-restart"]],
    ]);
    const phases = results.flatMap((r) => r.phases);
    expect(phases.map((p) => [p.key, p.converged])).toEqual(phases.map((p) => [p.key, 3]));
    // Streaming lists: a watch per reflector and no list; the gate off: each replica's first
    // reflector is refused once, and every reflector of it lists.
    const start = (key: string) => {
      const p = phases.find((x) => x.key === key);
      return {
        lists: p?.facts["LIST requests for Secrets, fleet"],
        streamed: p?.fleet.streamedLists,
        refused: p?.fleet.refusedStreams,
        met: p?.targets.map((t) => t.met),
      };
    };
    // The same for a rolling restart, one replica a wave; the API server's memory is measured.
    expect(
      [
        "cold-start-streaming",
        "rolling-restart-streaming",
        "cold-start-gate-off",
        "rolling-restart-gate-off",
      ].map(start),
    ).toEqual([
      { lists: 0, streamed: 6, refused: 0, met: [true] },
      { lists: 0, streamed: 6, refused: 0, met: [true] },
      { lists: 6, streamed: 0, refused: 3, met: [true] },
      { lists: 6, streamed: 0, refused: 3, met: [true] },
    ]);
    expect(phases.every((p) => (p.apiServer.rssPeakMiB ?? 0) > 0)).toBe(true);
    const add = phases.find((p) => p.key === "registry-add");
    // Each replica, told apart by its own kubeconfig, received at least the 10 added Secrets.
    expect(add?.perReplica.objects.min).toBeGreaterThanOrEqual(10);
    expect(add?.facts["JSON of the added Apps' Secrets (bytes)"]).toBeGreaterThan(10 * 1024);
    const restart = phases.find((p) => p.key === "api-restart");
    // The restart lost the history: every replica's App Secret watch resumed into a 410 and
    // relisted.
    expect(restart?.fleet.expired).toBeGreaterThanOrEqual(3);
    expect(restart?.fleet.secretListStarts).toBeGreaterThanOrEqual(3);
    expect(restart?.perSecond.length).toBeGreaterThan(0);

    const report = await renderReport(["smoke"], dir);
    expect(report).toContain("#### API-server restart losing the watch history");
    expect(report).toContain(
      "| | cold start, streaming lists | rolling restart, streaming lists | cold start, WatchList feature gate off | rolling restart, WatchList feature gate off |",
    );
    expect(report).toContain("#### What 500 replicas would cost the API server");
  }, 180_000);
});
