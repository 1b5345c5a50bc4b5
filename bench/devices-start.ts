// The start of a build as the image starts it, for the devices suite: spawn to the first routed
// `/v1/route` answer, the process's CPU by then, and RSS after sync.

import { waitUntil } from "../test/support/wait.ts";
import type { BenchCluster } from "./cluster.ts";
import type { Subject } from "./devices-hop.ts";
import { metric, waitForStatus } from "./http-probe.ts";
import { startShipped } from "./shipped.ts";

const SETTLE_MS = 2_000;

/**
 * One start: spawn to the first routed answer, the process's CPU by then (what the wall time
 * would be on a machine with cores to spare), and RSS `SETTLE_MS` after every App is ready.
 */
export interface Start {
  readonly routedMs: number;
  readonly cpuMs: number;
  readonly rss: number;
}

async function start(s: Subject, cluster: BenchCluster): Promise<Start> {
  const server = await startShipped({
    kubeconfig: cluster.kubeconfigPath,
    registryNamespace: cluster.registryNamespace,
    entry: s.entry,
    env: s.env,
    withoutEnv: s.withoutEnv,
    nodeFlags: s.nodeFlags,
    name: s.name,
  });
  try {
    // The last App of the bench Registry: routed once the whole first Snapshot is.
    const host = `app-${cluster.apps - 1}.example.com`;
    await waitForStatus(server.dataPort, "/v1/route", 200, 120_000, 1, host);
    const routedMs = performance.now() - server.spawnedAt;
    const cpuMs = server.cpuMicros() / 1000;
    await waitUntil(
      async () =>
        (await metric(server.opsPort, "replica_mirror_snapshot_ready_apps")) === cluster.apps,
      { timeoutMs: 60_000, intervalMs: 50, what: `${cluster.apps} ready Apps` },
    );
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return { routedMs, cpuMs, rss: server.rss() };
  } catch (e) {
    throw new Error(`${String(e)}\n${server.output().slice(-2000)}`);
  } finally {
    await server.stop();
  }
}

/** Per subject (by name), one start per round, the order rotating between rounds. */
export async function startRounds(
  subjects: readonly Subject[],
  cluster: BenchCluster,
  rounds: number,
): Promise<Map<string, Start[]>> {
  const starts = new Map<string, Start[]>(subjects.map((s) => [s.name, []]));
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < subjects.length; i++) {
      const s = subjects[(i + r) % subjects.length]!;
      starts.get(s.name)!.push(await start(s, cluster));
    }
  return starts;
}
