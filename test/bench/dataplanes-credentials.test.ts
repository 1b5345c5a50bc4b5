import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { DataplanesData, RotationData, SizeData } from "../../bench/dataplanes/data.ts";
import { dataplaneRows } from "../../bench/dataplanes/report.ts";
import {
  credentialComparisons,
  credentialRows,
} from "../../bench/dataplanes/report-credentials.ts";
import { afterNewTotal, rotationRows } from "../../bench/dataplanes/report-rotation.ts";
import {
  describeAnswer,
  type Observed,
  rotationOutcome,
} from "../../bench/dataplanes/rotation-observer.ts";
import { authorizationDigest } from "../../bench/dataplanes/seen-upstream.ts";
import { defaultParts, stagesOf } from "../../bench/dataplanes/suite.ts";
import { registryDocument } from "../../bench/fixtures.ts";
import type { RunResult } from "../../bench/rounds.ts";

const run = (rps: number, cpuPerRequestUs = 50): RunResult => ({
  requests: rps * 3,
  seconds: 3,
  failures: 0,
  p50Us: 1000,
  p99Us: 3000,
  rps,
  cpuPerRequestUs,
});
const runs = (...rps: number[]) => rps.map((r) => run(r));
const split = (n: number) => Array.from({ length: n }, () => ({ proxyUs: 40, sidecarUs: 10 }));

/** nginx at 10k Apps: alone, hop off and on (40 B), in three rounds; Caddy's zero-hop left out. */
const size: SizeData = {
  runs: {
    "nginx alone": runs(10e3, 10e3, 10e3),
    "nginx hop": runs(7e3, 7.2e3, 6.9e3),
    "nginx hop, 40 B credentials": runs(6.9e3, 7e3, 6.9e3),
  },
  split: { "nginx hop": split(3), "nginx hop, 40 B credentials": split(3) },
  upstreamConnectionsPerRequest: {},
  sidecarReadyMs: 100,
  credentialBytes: [40],
  credentialsLeftOut: {
    "caddy zero-hop, 40 B credentials":
      "answered 503 secret-unavailable to an App with a credential",
  },
};

const rotation: RotationData = {
  apps: 10_000,
  rotation: "one App's value rewritten",
  valueBytes: 1024,
  connections: 4,
  checkMs: 200,
  samples: { "nginx hop": [4, 5, 3, 30], "haproxy zero-hop": [40, 50, 60, 70] },
  warmUp: { "nginx hop": [9, 8], "haproxy zero-hop": [90, 80] },
  afterNew: {
    "nginx hop": { checked: 100, old: 0, other: 0, failed: 0 },
    "haproxy zero-hop": { checked: 80, old: 0, other: 1, failed: 2 },
  },
  unmeasured: { "caddy zero-hop": "before rotation 1, app-3.example.com answered: 503" },
};

const data = {
  rounds: 3,
  seconds: 3,
  connections: 32,
  load: "wrk (1 thread)",
  upstream: "nginx",
  versions: { nginx: "nginx", caddy: "caddy", haproxy: "haproxy" },
  sizes: { 10000: size },
  rotations: [rotation],
} satisfies DataplanesData;

describe("the data-plane bench with credentials", () => {
  it("takes the header's cost as the median of per-round differences of the two ratios", () => {
    const [c] = credentialComparisons(data);
    expect([c?.kind, c?.variant, c?.apps, c?.bytes, c?.off.rpsRatio, c?.on.rpsRatio]).toEqual([
      "nginx",
      "hop",
      10_000,
      40,
      0.7,
      0.69,
    ]);
    // Per round 0.01, 0.02 and 0.00.
    expect(c?.cost).toBeCloseTo(0.01, 10);
    expect(credentialComparisons(data)).toHaveLength(1);
  });

  it("prints a row per mode measured both ways, then one per mode left out", () => {
    const how =
      "every App's credential Bearer + a value of that size, --serve-credentials true; on and off between the same two runs alone, every round";
    expect(credentialRows(data)).toEqual([
      {
        bench: `nginx auth_request, 10k Apps, 40 B credentials: req/s against the proxy alone, on (${how})`,
        figure: "on 0.69x (6.9k req/s, 50.0 µs a request)",
        baseline: "off 0.70x (7.0k req/s, 50.0 µs a request)",
        ratio: "costs 0.010x",
        target: "costs <= 0.02x",
        met: "yes",
      },
      {
        bench: "Caddy admin API, 10k Apps, 40 B credentials: req/s against the proxy alone, on",
        figure: "not measured",
        baseline: "answered 503 secret-unavailable to an App with a credential",
        ratio: "-",
        target: "costs <= 0.02x",
        met: "no",
      },
    ]);
  });

  it("prints rotation rows per proxy and mode against their targets, then the old-after-new count", () => {
    expect(rotationRows([rotation])).toEqual([
      {
        bench:
          "rotation → upstream, nginx auth_request, hop, 10k Apps, 1 KiB values, 4 rotations (one App's value rewritten): p50 / p99 / max",
        figure: "4.0 / 30.0 / 30.0 ms",
        baseline: "-",
        ratio: "-",
        target: "p99 < 20 ms",
        met: "no",
      },
      {
        bench: "rotation → upstream, Caddy admin API, zero-hop, 10k Apps, 1 KiB values",
        figure: "not measured",
        baseline: "before rotation 1, app-3.example.com answered: 503",
        ratio: "-",
        target: "reported (a reload per push)",
        met: "no",
      },
      {
        bench:
          "rotation → upstream, HAProxy runtime API map, zero-hop, 10k Apps, 1 KiB values, 4 rotations (the same procedure): p50 / p99 / max",
        figure: "50.0 / 70.0 / 70.0 ms",
        baseline: "-",
        ratio: "-",
        target: "p99 < 100 ms",
        met: "yes",
      },
      {
        bench:
          "rotation: requests sent after the first answer with the new value whose upstream got the old one (every variant and size measured, 4 connections asking until 200 ms after it)",
        figure: "0 of 180",
        baseline: "2 failed connections, 1 other answers",
        ratio: "-",
        target: "0",
        met: "yes",
      },
    ]);
    expect(afterNewTotal([rotation, rotation])).toEqual({
      checked: 360,
      old: 0,
      other: 2,
      failed: 4,
    });
  });

  it("puts the credential rows after the load rows and the rotation rows last", () => {
    const rows = dataplaneRows(data);
    expect(rows.slice(-6).map((r) => r.bench.split(",")[0])).toEqual([
      "nginx auth_request",
      "Caddy admin API",
      "rotation → upstream",
      "rotation → upstream",
      "rotation → upstream",
      "rotation: requests sent after the first answer with the new value whose upstream got the old one (every variant and size measured",
    ]);
  });
});

describe("a rotation as clients see it", () => {
  const at = (sentAt: number, receivedAt: number, seen: Observed["seen"]): Observed => ({
    sentAt,
    receivedAt,
    seen,
  });

  it("times the first new answer on any connection and counts what was sent after it", () => {
    const observed = [
      at(100, 101, "old"),
      at(101, 103, "old"),
      // In flight when the first new answer came: decided before the switch, not counted.
      at(102, 106, "old"),
      at(102, 104, "new"),
      at(104.5, 105, "new"),
      at(105, 107, "failed"),
      at(106, 107, "other"),
      at(107, 108, "old"),
    ];
    expect(rotationOutcome(observed, 100)).toEqual({
      ms: 4,
      after: { checked: 4, old: 1, other: 1, failed: 1 },
    });
  });

  it("has no time when the new value never came", () => {
    expect(rotationOutcome([at(1, 2, "old"), at(2, 3, "failed")], 0)).toEqual({
      ms: null,
      after: { checked: 0, old: 0, other: 0, failed: 0 },
    });
  });

  it("digests each Authorization the upstream got, and names them without their values", () => {
    const sha = (v: string) => createHash("sha256").update(v).digest("hex").slice(0, 16);
    expect(authorizationDigest([])).toBe("none");
    expect(authorizationDigest(["Bearer a"])).toBe(sha("Bearer a"));
    expect(authorizationDigest(["Bearer a", "Basic b"])).toBe(
      `${sha("Bearer a")},${sha("Basic b")}`,
    );
    const known = { [sha("Bearer a")]: "the App's value" };
    const answer = (seen: string | null, status = 200, reason: string | null = null) =>
      describeAnswer({ status, reason, seen }, known);
    expect(answer(sha("Bearer a"))).toBe("200, the upstream got Authorization: the App's value");
    expect(answer(`${sha("Bearer a")},${sha("x")}`)).toBe(
      "200, the upstream got Authorization: the App's value and another value",
    );
    expect(answer("none")).toBe("200, the upstream got no Authorization");
    expect(answer(null, 503, "secret-unavailable")).toBe(
      "503 secret-unavailable, not from the upstream",
    );
    expect(describeAnswer(new Error("socket hang up"), known)).toBe(
      "the connection failed (socket hang up)",
    );
  });
});

describe("the suite's stages", () => {
  it("runs credentials on beside off at 10k in a full run, and rotations on a cluster of their own", () => {
    expect(stagesOf(defaultParts(false), false)).toEqual([
      { apps: 1_000, load: true, credentialBytes: [], writes: 0 },
      { apps: 10_000, load: true, credentialBytes: [40, 1024], writes: 100 },
      { apps: 10_000, rotations: 100, valueBytes: 40 },
      { apps: 10_000, rotations: 100, valueBytes: 1024 },
    ]);
    expect(stagesOf(defaultParts(true), true)).toEqual([
      { apps: 1_000, load: true, credentialBytes: [40, 1024], writes: 0 },
      { apps: 10_000, load: false, credentialBytes: [], writes: 6 },
      { apps: 10_000, rotations: 6, valueBytes: 40 },
      { apps: 10_000, rotations: 6, valueBytes: 1024 },
    ]);
    expect(stagesOf(new Set(["load-10k"]), false)).toEqual([
      { apps: 10_000, load: true, credentialBytes: [40, 1024], writes: 0 },
    ]);
    expect(stagesOf(new Set(["rotations"]), false, [64])).toEqual([
      { apps: 10_000, rotations: 100, valueBytes: 64 },
    ]);
  });

  it("gives every App of a bench Registry the credential when asked", () => {
    const credentials = registryDocument(3, { credential: { prefix: "Bearer " } }).apps.map(
      (a) => a.credential,
    );
    expect(credentials).toEqual(Array(3).fill({ prefix: "Bearer " }));
    expect(registryDocument(1).apps[0]).not.toHaveProperty("credential");
  });
});
