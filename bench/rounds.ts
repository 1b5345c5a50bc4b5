// Servers measured under the same load in alternating rounds: every round runs each server once,
// back to back, in a rotating order, so drift on a shared machine hits all of them alike.

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

/** Per server (by name), its run in each round, after one warm-up run each. */
export async function alternate(
  servers: readonly ServerProcess[],
  o: RoundsOptions,
): Promise<Map<string, RunResult[]>> {
  const once = async (s: ServerProcess): Promise<RunResult> => {
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
  };
  // Warm-up: JIT, connections, the first collections.
  for (const s of servers) await once(s);
  const runs = new Map<string, RunResult[]>(servers.map((s) => [s.name, []]));
  for (let round = 0; round < o.rounds; round++) {
    for (let i = 0; i < servers.length; i++) {
      const s = servers[(i + round) % servers.length]!;
      runs.get(s.name)!.push(await once(s));
    }
  }
  return runs;
}

/** The median over rounds of `f(a) / f(b)`, a round at a time. */
export function medianRatio(
  a: readonly RunResult[],
  b: readonly RunResult[],
  f: (r: RunResult) => number,
): number {
  return median(a.map((x, i) => f(x) / f(b[i]!)));
}
