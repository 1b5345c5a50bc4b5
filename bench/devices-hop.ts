// What a device is worth on the request path where users pay for it: nginx with its shipped hop
// configuration (`auth_request` to the sidecar on every request) in front of each build, against
// one upstream, under the same load in alternating rounds. The sidecar's share of what the user
// pays is the hop's, so a device that speeds `/v1/route` up shows here only as much as it moves
// the proxy's throughput.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPlane, writeShippedConfig } from "../test/support/data-plane.ts";
import { freePort } from "./child.ts";
import type { BenchCluster } from "./cluster.ts";
import type { CpuSplit } from "./dataplanes/data.ts";
import { type Measured, measure } from "./dataplanes/measured.ts";
import { type ProxyProcess, startProxy } from "./dataplanes/proxy-process.ts";
import { startLoadGenerator, writeHostsFile } from "./load.ts";
import { alternate, type RunResult } from "./rounds.ts";
import type { ServerProcess } from "./server-process.ts";
import { startSynced } from "./shipped.ts";

/** A build of the sidecar, started as the image starts it. */
export interface Subject {
  readonly name: string;
  readonly entry: string;
  readonly env: Readonly<Record<string, string>>;
  readonly withoutEnv: readonly string[];
  /** The V8 flags it starts with: the image's, less those the variant leaves out. */
  readonly nodeFlags: readonly string[];
}

export interface HopOptions {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
}

/** nginx's path, or why there is none. */
export function nginxBinary(): string {
  const tool = findPlane("nginx");
  if (tool.path === undefined) throw new Error(`nginx: ${tool.missing}`);
  return tool.path;
}

/** Per subject (by name), its run in each round, and how its CPU split between nginx and sidecar. */
export interface HopRuns {
  readonly runs: Map<string, RunResult[]>;
  readonly split: Map<string, CpuSplit[]>;
}

/**
 * Per subject (by name), its run in each round: nginx hop in front of each subject's sidecar,
 * synced with `cluster` (whose Apps route to the upstream), every process living for the whole
 * phase as a sidecar does. Per run, CPU is nginx's and its sidecar's together.
 */
export async function hopRounds(
  subjects: readonly Subject[],
  cluster: BenchCluster,
  o: HopOptions,
): Promise<HopRuns> {
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-devices-hop-"));
  const sidecars: ServerProcess[] = [];
  const proxies: ProxyProcess[] = [];
  const load = await startLoadGenerator();
  try {
    const measured: Measured[] = [];
    for (const s of subjects) {
      const { server } = await startSynced(cluster, {
        entry: s.entry,
        env: s.env,
        withoutEnv: s.withoutEnv,
        nodeFlags: s.nodeFlags,
        name: `${s.name} sidecar`,
      });
      sidecars.push(server);
      const port = await freePort();
      const own = await mkdtemp(join(dir, `${s.name}-`));
      const launch = await writeShippedConfig("nginx", {
        port,
        dir: own,
        sidecarPort: server.dataPort,
      });
      const proxy = await startProxy({
        name: s.name,
        command: nginxBinary(),
        args: launch.args,
        env: launch.env,
        port,
      });
      proxies.push(proxy);
      measured.push(measure(proxy, server.pid));
    }
    const servers = measured.map((m) => m.server);
    const runs = await alternate(servers, { ...o, load, hostsFile: writeHostsFile(cluster.apps) });
    const split = new Map(measured.map((m) => [m.server.name, m.splits(runs.get(m.server.name)!)]));
    return { runs, split };
  } finally {
    await load.close();
    await Promise.all(proxies.map((p) => p.stop()));
    await Promise.all(sidecars.map((s) => s.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}
