// Servers measured under the same load in alternating rounds: every round runs each server once,
// back to back, in a rotating order, so drift on a shared machine hits all of them alike; or each
// variant between two runs of its baseline (`sandwiched`), closer still.

import type { LoadGenerator, LoadResult } from "./load.ts";
import { median } from "./measure.ts";
import type { ServerProcess } from "./server-process.ts";

/** One server's run in one round. */
export interface RunResult extends LoadResult {
  readonly rps: number;
  /** Server user + system CPU per answered request. */
  readonly cpuPerRequestUs: number;
}

export interface RoundsOptions {
  readonly load: LoadGenerator;
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly hostsFile: string;
}

/** One run of `s` under the rounds' load, with its CPU per request. */
async function runOnce(s: ServerProcess, o: RoundsOptions): Promise<RunResult> {
  const cpu0 = s.cpuMicros();
  const r = await o.load.run({
    port: s.dataPort,
    path: "/v1/route",
    seconds: o.seconds,
    connections: o.connections,
    hostsFile: o.hostsFile,
  });
  const cpu = s.cpuMicros() - cpu0;
  if (r.failures > 0 || r.requests === 0)
    throw new Error(`${s.name}: ${r.failures} failed requests of ${r.requests}`);
  return { ...r, rps: r.requests / r.seconds, cpuPerRequestUs: cpu / r.requests };
}

/** Per server (by name), its run in each round, after one warm-up run each. */
export async function alternate(
  servers: readonly ServerProcess[],
  o: RoundsOptions,
): Promise<Map<string, RunResult[]>> {
  // Warm-up: JIT, connections, the first collections.
  for (const s of servers) await runOnce(s, o);
  const runs = new Map<string, RunResult[]>(servers.map((s) => [s.name, []]));
  for (let round = 0; round < o.rounds; round++) {
    for (let i = 0; i < servers.length; i++) {
      const s = servers[(i + round) % servers.length]!;
      runs.get(s.name)!.push(await runOnce(s, o));
    }
  }
  return runs;
}

/** A baseline and the servers compared with it. */
export interface RoundGroup {
  readonly baseline: ServerProcess;
  readonly variants: readonly ServerProcess[];
}

/**
 * Per server (by name), its run in each round, after one warm-up run each; like `alternate`, but
 * each group's variants run between two runs of its baseline, whose round is the two merged. A
 * ratio to the baseline then compares runs at most a few seconds apart, and a machine that slows
 * down or speeds up during the group moves both sides alike. The groups rotate between rounds,
 * and the variants' order within a group reverses.
 */
export async function sandwiched(
  groups: readonly RoundGroup[],
  o: RoundsOptions,
): Promise<Map<string, RunResult[]>> {
  const servers = groups.flatMap((g) => [g.baseline, ...g.variants]);
  for (const s of servers) await runOnce(s, o);
  const runs = new Map<string, RunResult[]>(servers.map((s) => [s.name, []]));
  for (let round = 0; round < o.rounds; round++) {
    for (let i = 0; i < groups.length; i++) {
      const { baseline, variants } = groups[(i + round) % groups.length]!;
      const before = await runOnce(baseline, o);
      for (const v of round % 2 === 0 ? variants : [...variants].reverse())
        runs.get(v.name)!.push(await runOnce(v, o));
      runs.get(baseline.name)!.push(merged(before, await runOnce(baseline, o)));
    }
  }
  return runs;
}

/** Two runs of one server as one: their requests over their time, latencies averaged. */
function merged(a: RunResult, b: RunResult): RunResult {
  const requests = a.requests + b.requests;
  const seconds = a.seconds + b.seconds;
  return {
    requests,
    seconds,
    failures: a.failures + b.failures,
    p50Us: (a.p50Us + b.p50Us) / 2,
    p99Us: (a.p99Us + b.p99Us) / 2,
    rps: requests / seconds,
    cpuPerRequestUs: (a.cpuPerRequestUs * a.requests + b.cpuPerRequestUs * b.requests) / requests,
  };
}

/** The median over rounds of `f(a) / f(b)`, a round at a time. */
export function medianRatio(
  a: readonly RunResult[],
  b: readonly RunResult[],
  f: (r: RunResult) => number,
): number {
  return median(a.map((x, i) => f(x) / f(b[i]!)));
}
