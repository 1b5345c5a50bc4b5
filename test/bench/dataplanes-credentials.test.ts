import { describe, expect, it } from "vitest";
import type { DataplanesData, RotationData, SizeData } from "../../bench/dataplanes/data.ts";
import { dataplaneRows } from "../../bench/dataplanes/report.ts";
import {
  credentialComparisons,
  credentialRows,
} from "../../bench/dataplanes/report-credentials.ts";
import { afterNewTotal, rotationRows } from "../../bench/dataplanes/report-rotation.ts";
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

/**
 * 10k Apps, three rounds, credentials of 40 B: nginx hop and zero-hop off and on, each baseline
 * with the header too; HAProxy zero-hop off and on, saved before the header ran; Caddy's zero-hop
 * left out.
 */
const size: SizeData = {
  runs: {
    "nginx alone": runs(10e3, 10e3, 10e3),
    "nginx hop": runs(7e3, 7.2e3, 6.9e3),
    "nginx hop, 40 B credentials": runs(6.9e3, 7e3, 6.9e3),
    "nginx alone, 40 B Authorization": [9.9e3, 9.95e3, 9.8e3].map((r) => run(r, 30)),
    "nginx alone-pooled": runs(12e3, 12e3, 12e3),
    "nginx zero-hop": runs(10.8e3, 10.8e3, 10.8e3),
    "nginx zero-hop, 40 B credentials": runs(9.36e3, 9.36e3, 9.36e3),
    "nginx alone-pooled, 40 B Authorization": [10.8e3, 10.8e3, 10.8e3].map((r) => run(r, 30)),
    "haproxy alone": runs(10e3, 10e3, 10e3),
    "haproxy zero-hop": runs(9.5e3, 9.5e3, 9.5e3),
    "haproxy zero-hop, 40 B credentials": runs(9e3, 9e3, 9e3),
  },
  split: Object.fromEntries(
    ["nginx hop", "nginx zero-hop", "haproxy zero-hop"].flatMap((name) => [
      [name, split(3)],
      [`${name}, 40 B credentials`, split(3)],
    ]),
  ),
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
  });

  it("takes out the header's own cost against each mode's baseline with it, a round at a time", () => {
    const close = (n: number) => expect.closeTo(n, 10);
    const figures = credentialComparisons(data).map(({ kind, variant, cost, header }) => ({
      kind,
      variant,
      cost,
      header,
    }));
    expect(figures).toEqual([
      {
        kind: "nginx",
        variant: "hop",
        cost: close(0.01),
        // Per round: the header 0.01, 0.005, 0.02; on against it 6.9/9.9, 7/9.95, 6.9/9.8; off
        // 0.7, 0.72, 0.69 against alone: beyond it 0.003, 0.016, -0.014.
        header: {
          rps: 9.9e3,
          cpuUs: 30,
          cost: close(0.01),
          onRatio: close(7 / 9.95),
          beyond: close(0.7 - 6.9 / 9.9),
        },
      },
      {
        kind: "nginx",
        variant: "zero-hop",
        cost: close(0.12),
        header: {
          rps: 10.8e3,
          cpuUs: 30,
          cost: close(0.1),
          onRatio: close(9.36 / 10.8),
          beyond: close(0.9 - 9.36 / 10.8),
        },
      },
      { kind: "haproxy", variant: "zero-hop", cost: close(0.05), header: null },
    ]);
  });

  it("prints per mode measured both ways the total, then the cost beyond the header against the target; then one per mode left out", () => {
    const how =
      "every App's credential Bearer + a value of that size, --serve-credentials true; on and off between the same two runs alone, every round";
    const headerHow =
      "the proxy alone setting a fixed Authorization: Bearer + a value of that size on every upstream request, beside on, between the same two runs alone; per round, the header itself 1 − its req/s ÷ alone's, beyond it ratio off − on ÷ alone with the header";
    const target = "costs beyond the header itself <= 0.02x";
    const total = (name: string, told: string) =>
      `${name}, 10k Apps, 40 B credentials: req/s against the proxy alone, on (${told})`;
    const beyond = (name: string, told: string) =>
      `${name}, 10k Apps, 40 B credentials: cost beyond the header itself (${told})`;
    expect(credentialRows(data)).toEqual([
      {
        bench: total("nginx auth_request", how),
        figure: "on 0.69x (6.9k req/s, 50.0 µs a request)",
        baseline: "off 0.70x (7.0k req/s, 50.0 µs a request)",
        ratio: "costs 0.010x",
        target: "reported",
        met: "-",
      },
      {
        bench: beyond("nginx auth_request", headerHow),
        figure: "on 0.70x against alone with the header (9.9k req/s, 30.0 µs a request)",
        baseline: "the header itself costs 0.010x",
        ratio: "costs 0.003x beyond the header itself",
        target,
        met: "yes",
      },
      {
        bench: total("nginx Lua shared dict", "same procedure"),
        figure: "on 0.78x (9.4k req/s, 50.0 µs a request)",
        baseline: "off 0.90x (10.8k req/s, 50.0 µs a request)",
        ratio: "costs 0.120x",
        target: "reported",
        met: "-",
      },
      {
        bench: beyond("nginx Lua shared dict", "same procedure"),
        figure: "on 0.87x against alone with the header (10.8k req/s, 30.0 µs a request)",
        baseline: "the header itself costs 0.100x",
        ratio: "costs 0.033x beyond the header itself",
        target,
        met: "no",
      },
      {
        bench: total("HAProxy runtime API map", "same procedure"),
        figure: "on 0.90x (9.0k req/s, 50.0 µs a request)",
        baseline: "off 0.95x (9.5k req/s, 50.0 µs a request)",
        ratio: "costs 0.050x",
        target: "reported",
        met: "-",
      },
      {
        bench: "Caddy admin API, 10k Apps, 40 B credentials: req/s against the proxy alone, on",
        figure: "not measured",
        baseline: "answered 503 secret-unavailable to an App with a credential",
        ratio: "-",
        target,
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
    expect(rows.slice(-10).map((r) => r.bench.split(",")[0])).toEqual([
      "nginx auth_request",
      "nginx auth_request",
      "nginx Lua shared dict",
      "nginx Lua shared dict",
      "HAProxy runtime API map",
      "Caddy admin API",
      "rotation → upstream",
      "rotation → upstream",
      "rotation → upstream",
      "rotation: requests sent after the first answer with the new value whose upstream got the old one (every variant and size measured",
    ]);
  });
});

describe("the suite's stages", () => {
  it("runs credentials on beside off at 10k in a full run, writes and rotations at 100k too, and rotations and TLS on clusters of their own", () => {
    expect(stagesOf(defaultParts(false), false)).toEqual([
      { apps: 1_000, load: true, credentialBytes: [], writes: 0 },
      { apps: 10_000, load: true, credentialBytes: [40, 1024], writes: 100 },
      { apps: 10_000, rotations: 100, valueBytes: 40 },
      { apps: 10_000, rotations: 100, valueBytes: 1024 },
      { apps: 100_000, load: false, credentialBytes: [], writes: 100 },
      { apps: 100_000, rotations: 100, valueBytes: 40 },
      { apps: 10_000, certificates: 1_000, tlsRotations: 100 },
    ]);
    expect(stagesOf(defaultParts(true), true)).toEqual([
      { apps: 1_000, load: true, credentialBytes: [40, 1024], writes: 0 },
      { apps: 10_000, load: false, credentialBytes: [], writes: 6 },
      { apps: 10_000, rotations: 6, valueBytes: 40 },
      { apps: 10_000, rotations: 6, valueBytes: 1024 },
      { apps: 1_000, certificates: 100, tlsRotations: 6 },
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
