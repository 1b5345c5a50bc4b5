// A proxy as the rounds measure it: its CPU read from /proc, with its sidecar's added when it has
// one (hop and zero-hop), each reading kept so that a run's CPU per request splits between the two.

import { cpuMicros, rssBytes } from "../proc-stats.ts";
import type { RunResult } from "../rounds.ts";
import type { ServerProcess } from "../server-process.ts";
import type { CpuSplit } from "./data.ts";
import type { ProxyProcess } from "./proxy-process.ts";

/** A proxy as `alternate` measures it, and the CPU readings it took. */
export interface Measured {
  readonly server: ServerProcess;
  readonly withSidecar: boolean;
  /** Each round's CPU per request split, given the rounds' runs (the warm-up's left out). */
  splits(runs: readonly RunResult[]): CpuSplit[];
}

/**
 * The proxy as a `ServerProcess` whose CPU is the proxy's plus the sidecar's (`sidecarPid`) when
 * it has one. `alternate` reads the CPU just before and just after each run, the warm-up first,
 * so the last readings pair up with the rounds' runs.
 */
export function measure(proxy: ProxyProcess, sidecarPid: number | null): Measured {
  const readings: CpuSplit[] = [];
  const sidecarCpu = () => (sidecarPid === null ? 0 : cpuMicros(sidecarPid));
  const server: ServerProcess = {
    name: proxy.name,
    pid: proxy.pid,
    dataPort: proxy.port,
    opsPort: proxy.port,
    spawnedAt: 0,
    rss: () => rssBytes(proxy.pid),
    cpuMicros() {
      const reading = { proxyUs: proxy.cpuMicros(), sidecarUs: sidecarCpu() };
      readings.push(reading);
      return reading.proxyUs + reading.sidecarUs;
    },
    output: proxy.stderr,
    stop: () => proxy.stop(),
  };
  return {
    server,
    withSidecar: sidecarPid !== null,
    splits: (runs) => {
      const rounds = readings.slice(-2 * runs.length);
      return runs.map((run, i) => {
        const [before, after] = [rounds[2 * i]!, rounds[2 * i + 1]!];
        return {
          proxyUs: (after.proxyUs - before.proxyUs) / run.requests,
          sidecarUs: (after.sidecarUs - before.sidecarUs) / run.requests,
        };
      });
    },
  };
}
