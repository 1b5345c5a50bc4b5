import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { comparisons } from "../../bench/dataplanes/compare.ts";
import type { DataplanesData, SizeData } from "../../bench/dataplanes/data.ts";
import { processTree } from "../../bench/dataplanes/proxy-process.ts";
import { dataplaneRows } from "../../bench/dataplanes/report.ts";
import { summarizeWrites, writeRows } from "../../bench/dataplanes/report-writes.ts";
import { parseStubStatus } from "../../bench/dataplanes/upstream.ts";
import { proxiesHold } from "../../bench/dataplanes/zero-hop.ts";
import { registryDocument } from "../../bench/fixtures.ts";
import type { RunResult } from "../../bench/rounds.ts";

const run = (rps: number, p50Us: number, p99Us: number, cpuPerRequestUs: number): RunResult => ({
  requests: rps * 3,
  seconds: 3,
  failures: 0,
  p50Us,
  p99Us,
  rps,
  cpuPerRequestUs,
});

/** Each round's `[req/s, p50 µs, p99 µs, CPU µs per request]`. */
const rounds = (...rs: [number, number, number, number][]) => rs.map((r) => run(...r));
/** Each round's `[proxy µs, sidecar µs]` of CPU per request. */
const splits = (...rs: [number, number][]) =>
  rs.map(([proxyUs, sidecarUs]) => ({ proxyUs, sidecarUs }));
const alone = rounds([10e3, 1e3, 3e3, 50], [8e3, 1.2e3, 3.5e3, 60], [12e3, 900, 2e3, 40]);
const hop = rounds([7e3, 1.5e3, 4e3, 80], [6.4e3, 1.5e3, 4.5e3, 90], [6e3, 1.7e3, 3e3, 100]);
const zeroHop = rounds(
  [9.5e3, 1.1e3, 3.2e3, 52],
  [7.8e3, 1.25e3, 3.4e3, 63],
  [11e3, 1e3, 2.5e3, 44],
);
const hopSplit = splits([60, 20], [65, 25], [70, 30]);
const zeroHopSplit = splits([50, 0.5], [60, 0.25], [42, 0.125]);

/** HAProxy at 1k Apps in the three variants, and a few timed writes. */
const haproxyData = {
  rounds: 3,
  seconds: 3,
  connections: 32,
  load: "wrk (1 thread)",
  upstream: "nginx",
  versions: { nginx: "nginx", caddy: "caddy", haproxy: "haproxy" },
  sizes: {
    1000: {
      runs: { "haproxy alone": alone, "haproxy hop": hop, "haproxy zero-hop": zeroHop },
      split: { "haproxy hop": hopSplit, "haproxy zero-hop": zeroHopSplit },
      upstreamConnectionsPerRequest: {},
      sidecarReadyMs: 100,
    } satisfies SizeData,
  },
  writeToAnswer: {
    apps: 10_000,
    write: "one Secret emptied or filled",
    samples: { "haproxy zero-hop": [40, 10, 30, 20, 150], "nginx hop": [4, 2, 3, 5, 1] },
    warmUp: { "haproxy zero-hop": [300, 200], "nginx hop": [9, 8] },
  },
} satisfies DataplanesData;

describe("the data-plane bench", () => {
  it("takes ratios and added latencies a round at a time, then the median over rounds", () => {
    const sizes = {
      1000: {
        runs: Object.fromEntries(
          ["nginx", "caddy", "haproxy"].flatMap((k) => [
            [`${k} alone`, alone],
            [`${k} hop`, hop],
          ]),
        ),
        split: Object.fromEntries(["nginx", "caddy", "haproxy"].map((k) => [`${k} hop`, hopSplit])),
        upstreamConnectionsPerRequest: {},
        sidecarReadyMs: 100,
      },
    };
    const data = { sizes } as unknown as DataplanesData;
    expect(comparisons(data)[0]).toEqual({
      kind: "nginx",
      variant: "hop",
      baseline: "alone",
      apps: 1000,
      rps: 6_400,
      aloneRps: 10_000,
      // Per round 0.7, 0.8 and 0.5.
      rpsRatio: 0.7,
      // Per round +0.5, +0.3 and +0.8 ms; +1, +1 and +1 ms.
      p50AddedMs: 0.5,
      p99AddedMs: 1,
      aloneP50Ms: 1,
      aloneP99Ms: 3,
      cpuUs: 90,
      proxyCpuUs: 65,
      sidecarCpuUs: 25,
      // 20 x 21k + 25 x 19.2k + 30 x 18k µs in 9 s.
      sidecarMsPerS: 160,
      aloneCpuUs: 50,
      // Per round 1.6, 1.5 and 2.5.
      cpuRatio: 1.6,
    });
    expect(comparisons(data, "zero-hop")).toEqual([]);
  });

  it("compares zero-hop with alone the same way, the sidecar's CPU per second too", () => {
    expect(comparisons(haproxyData, "zero-hop")).toEqual([
      {
        kind: "haproxy",
        variant: "zero-hop",
        baseline: "alone",
        apps: 1000,
        rps: 9_500,
        aloneRps: 10_000,
        // Per round 0.95, 0.975 and 0.917.
        rpsRatio: 0.95,
        // Per round +0.1, +0.05 and +0.1 ms; +0.2, -0.1 and +0.5 ms.
        p50AddedMs: 0.1,
        p99AddedMs: 0.2,
        aloneP50Ms: 1,
        aloneP99Ms: 3,
        cpuUs: 52,
        proxyCpuUs: 50,
        sidecarCpuUs: 0.25,
        // 0.5 x 28.5k + 0.25 x 23.4k + 0.125 x 33k µs in 9 s.
        sidecarMsPerS: 24_225 / 9 / 1000,
        aloneCpuUs: 50,
        // Per round 1.04, 1.05 and 1.1.
        cpuRatio: 1.05,
      },
    ]);
  });

  it("compares nginx in zero-hop mode with nginx alone keeping its upstream connections", () => {
    const size = haproxyData.sizes[1000];
    const data = {
      ...haproxyData,
      sizes: {
        1000: {
          ...size,
          runs: { "nginx alone": hop, "nginx alone-pooled": alone, "nginx zero-hop": zeroHop },
          split: { "nginx zero-hop": zeroHopSplit },
        },
      },
    };
    const [c] = comparisons(data, "zero-hop");
    expect([c?.kind, c?.baseline, c?.aloneRps, c?.rpsRatio]).toEqual([
      "nginx",
      "alone-pooled",
      10_000,
      0.95,
    ]);
    expect(dataplaneRows(data).map((r) => r.baseline)).toEqual([
      "nginx alone, upstream connections kept 10.0k",
      "nginx alone, upstream connections kept 1.00 / 3.00 ms",
      "nginx alone, upstream connections kept 50.0 µs",
      ...writeRows(haproxyData.writeToAnswer).map((r) => r.baseline),
    ]);
  });

  it("prints hop and zero-hop rows per proxy and size, then the write-to-answer rows", () => {
    const setup = "wrk (1 thread), 32 connections, random hosts, 3 rounds x 3 s";
    expect(dataplaneRows(haproxyData)).toEqual([
      {
        bench: `HAProxy Lua httpclient, 1k Apps: req/s, shipped config asking the sidecar (${setup})`,
        figure: "6.4k req/s",
        baseline: "haproxy alone 10.0k",
        ratio: "0.70x",
        target: "reported",
        met: "-",
      },
      {
        bench: "HAProxy Lua httpclient, 1k Apps: latency added, p50 / p99 (same runs)",
        figure: "+0.50 / +1.00 ms",
        baseline: "haproxy alone 1.00 / 3.00 ms",
        ratio: "-",
        target: "reported",
        met: "-",
      },
      {
        bench: "HAProxy Lua httpclient, 1k Apps: CPU per request, proxy + sidecar (same runs)",
        figure: "90.0 µs (proxy 65.0, sidecar 25.0)",
        baseline: "haproxy alone 50.0 µs",
        ratio: "1.60x",
        target: "reported",
        met: "-",
      },
      {
        bench: `HAProxy runtime API map, 1k Apps: req/s, shipped zero-hop config, its sidecar pushing the table (${setup})`,
        figure: "9.5k req/s",
        baseline: "haproxy alone 10.0k",
        ratio: "0.95x",
        target: ">= 0.90x (goal 0.95x)",
        met: "yes",
      },
      {
        bench: "HAProxy runtime API map, 1k Apps: latency added, p50 / p99 (same runs)",
        figure: "+0.10 / +0.20 ms",
        baseline: "haproxy alone 1.00 / 3.00 ms",
        ratio: "-",
        target: "reported",
        met: "-",
      },
      {
        bench: "HAProxy runtime API map, 1k Apps: CPU per request, proxy + sidecar (same runs)",
        figure: "52.0 µs (proxy 50.0, sidecar 0.25; the sidecar 2.69 ms/s)",
        baseline: "haproxy alone 50.0 µs",
        ratio: "1.05x",
        target: "reported",
        met: "-",
      },
      ...writeRows(haproxyData.writeToAnswer),
    ]);
  });

  it("sums up each variant's write-to-answer times and holds zero-hop to p99 < 100 ms", () => {
    expect(summarizeWrites("haproxy zero-hop", [40, 10, 30, 20, 150])).toEqual({
      name: "haproxy zero-hop",
      writes: 5,
      p50Ms: 30,
      p99Ms: 150,
      maxMs: 150,
    });
    const writes = (how: string) => `10k Apps, 5 writes (${how})`;
    expect(writeRows(haproxyData.writeToAnswer)).toEqual([
      {
        bench: `write → answer at the proxy, HAProxy runtime API map (zero-hop), ${writes("one Secret emptied or filled")}: p50 / p99 / max`,
        figure: "30.0 / 150 / 150 ms",
        baseline: "nginx auth_request (hop mode) 3.0 / 5.0 ms",
        ratio: "p99 30.00x hop",
        target: "p99 < 100 ms",
        met: "no",
      },
      {
        bench: `write → answer at the proxy, nginx auth_request (hop mode), ${writes("the same procedure")}: p50 / p99 / max`,
        figure: "3.0 / 5.0 / 5.0 ms",
        baseline: "-",
        ratio: "-",
        target: "reported",
        met: "-",
      },
    ]);
  });

  it("waits for every proxy to hold the sidecar's revision", () => {
    const proxy = (revision: number | null) => ({ target: "haproxy", revision });
    expect(proxiesHold({ revision: 3, proxies: [proxy(3)] })).toBe(true);
    expect(proxiesHold({ revision: 3, proxies: [proxy(3), proxy(2)] })).toBe(false);
    expect(proxiesHold({ revision: 3, proxies: [proxy(null)] })).toBe(false);
    expect(proxiesHold({ revision: 3, proxies: [] })).toBe(false);
    expect(proxiesHold({ revision: 0, proxies: [proxy(0)] })).toBe(false);
  });

  it("reads nginx's stub_status counters", () => {
    const page =
      "Active connections: 3 \nserver accepts handled requests\n 120 120 4567 \nReading: 0 Writing: 1 Waiting: 2 \n";
    expect(parseStubStatus(page)).toEqual({ accepts: 120, requests: 4567 });
  });

  it("finds a process's children among its descendants", async () => {
    const child = spawn("sleep", ["5"]);
    try {
      await new Promise((r) => child.once("spawn", r));
      expect(processTree(process.pid)).toContain(child.pid);
      expect(processTree(child.pid!)).toEqual([child.pid]);
    } finally {
      child.kill();
    }
  });

  it("points every App of the bench Registry at one upstream when asked", () => {
    const upstreams = registryDocument(25, { upstream: "http://127.0.0.1:9" }).apps.map(
      (a) => a.upstream,
    );
    expect(upstreams).toEqual(Array(25).fill("http://127.0.0.1:9"));
    expect(registryDocument(1).apps[0]!.upstream).toBe(
      "http://app-0.tenant-0.svc.cluster.local:8080",
    );
  });
});
