import { spawn } from "node:child_process";
import { freePort } from "./child.ts";
import { seedApps, spawnSidecar, startCluster } from "./cluster.ts";
import { waitForStatus } from "./http-probe.ts";
import { fmt, median, type Row } from "./measure.ts";

/**
 * From spawning `replica-mirror serve` (the real CLI, a new Node process) to its first `/readyz`
 * 200, with 1k and 10k Apps in an envtest in this process; the baselines are a process that only
 * loads Fastify and answers 200, and one that imports @kubernetes/client-node first (the sidecar
 * loads its kubeconfig with it), started and polled the same way. Rounds rotate the four.
 */
export async function benchStartup(quick: boolean): Promise<Row[]> {
  const rounds = quick ? 3 : 9;
  const sizes = [1_000, 10_000];
  const clusters = [];
  for (const n of sizes) {
    const cluster = await startCluster();
    await seedApps(cluster.envtest, n);
    clusters.push(cluster);
  }
  try {
    const times = {
      bare: [] as number[],
      clientNode: [] as number[],
      1000: [] as number[],
      10000: [] as number[],
    };
    for (let r = 0; r < rounds; r++) {
      const order = ["bare", "clientNode", ...sizes].map((_, i, all) => all[(i + r) % all.length]!);
      for (const which of order) {
        if (which === "bare") times.bare.push(await startBare(false));
        else if (which === "clientNode") times.clientNode.push(await startBare(true));
        else {
          const cluster = clusters[sizes.indexOf(which as number)]!;
          const sidecar = await spawnSidecar(cluster.kubeconfigPath);
          try {
            await waitForStatus(sidecar.opsPort, "/readyz", 200, 30_000, 1);
            times[which as 1_000 | 10_000].push(performance.now() - sidecar.spawnedAt);
          } finally {
            await sidecar.stop();
          }
        }
      }
    }
    const bare = median(times.bare);
    const clientNode = median(times.clientNode);
    return sizes.map((n) => {
      const t = median(times[n as 1_000 | 10_000]);
      return {
        bench: `start-up: process spawn to /readyz 200, ${n / 1000}k Apps (median of ${rounds})`,
        figure: `${fmt(t, 0)} ms`,
        baseline: `node + fastify answering 200: ${fmt(bare, 0)} ms; the same after importing @kubernetes/client-node: ${fmt(clientNode, 0)} ms`,
        ratio: `${fmt(t / bare, 2)}x (+${fmt(t - bare, 0)} ms)`,
        target: n === 10_000 ? "< 1 s" : "-",
        met: n === 10_000 ? (t < 1000 ? "yes" : "no") : "-",
      };
    });
  } finally {
    for (const c of clusters) await c.close();
  }
}

async function startBare(withClientNode: boolean): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawn(
    process.execPath,
    [
      new URL("./bare-start.ts", import.meta.url).pathname,
      String(port),
      ...(withClientNode ? ["client-node"] : []),
    ],
    {
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  try {
    await waitForStatus(port, "/readyz", 200, 30_000, 1);
    return performance.now() - t0;
  } finally {
    const gone = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await gone;
  }
}
