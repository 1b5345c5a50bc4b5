import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { processTree } from "../../bench/dataplanes/proxy-process.ts";
import { comparisons } from "../../bench/dataplanes/report.ts";
import type { DataplanesData } from "../../bench/dataplanes/suite.ts";
import { parseStubStatus } from "../../bench/dataplanes/upstream.ts";
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

describe("the data-plane bench", () => {
  it("takes ratios and added latencies a round at a time, then the median over rounds", () => {
    const alone = [
      run(10_000, 1_000, 3_000, 50),
      run(8_000, 1_200, 3_500, 60),
      run(12_000, 900, 2_000, 40),
    ];
    const hop = [
      run(7_000, 1_500, 4_000, 80),
      run(6_400, 1_500, 4_500, 90),
      run(6_000, 1_700, 3_000, 100),
    ];
    const sizes = {
      1000: {
        runs: Object.fromEntries(
          ["nginx", "caddy", "haproxy"].flatMap((k) => [
            [`${k} alone`, alone],
            [`${k} hop`, hop],
          ]),
        ),
        split: Object.fromEntries(
          ["nginx", "caddy", "haproxy"].map((k) => [
            `${k} hop`,
            [
              { proxyUs: 60, sidecarUs: 20 },
              { proxyUs: 65, sidecarUs: 25 },
              { proxyUs: 70, sidecarUs: 30 },
            ],
          ]),
        ),
        upstreamConnectionsPerRequest: {},
        sidecarReadyMs: 100,
      },
    };
    const data = { sizes } as unknown as DataplanesData;
    expect(comparisons(data)[0]).toEqual({
      kind: "nginx",
      apps: 1000,
      hopRps: 6_400,
      aloneRps: 10_000,
      // Per round 0.7, 0.8 and 0.5.
      rpsRatio: 0.7,
      // Per round +0.5, +0.3 and +0.8 ms; +1, +1 and +1 ms.
      p50AddedMs: 0.5,
      p99AddedMs: 1,
      aloneP50Ms: 1,
      aloneP99Ms: 3,
      hopCpuUs: 90,
      hopProxyCpuUs: 65,
      hopSidecarCpuUs: 25,
      aloneCpuUs: 50,
      // Per round 1.6, 1.5 and 2.5.
      cpuRatio: 1.6,
    });
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
