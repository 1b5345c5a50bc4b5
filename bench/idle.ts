import { BASELINE_LABEL, BASELINES, startBaseline } from "./baselines.ts";
import { sharedCluster } from "./cluster.ts";
import { waitForStatus } from "./http-probe.ts";
import { fmt, type Row } from "./measure.ts";
import type { ServerProcess } from "./server-process.ts";
import { startSynced } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const APPS = 10_000;

/**
 * What one replica costs while nothing happens: CPU per second of the shipped process synced with
 * 10k Apps and of each baseline, measured after the start's collections and V8's memory reducer
 * have settled (30 s after ready), over 20 s with no request and no cluster change. A Deployment
 * pays this figure times its replicas, all day.
 */
export async function benchIdle(ctx: SuiteContext): Promise<SuiteOutput> {
  const settleMs = ctx.quick ? 3_000 : 30_000;
  const windowMs = ctx.quick ? 5_000 : 20_000;
  const idleCpu = async (server: ServerProcess): Promise<number> => {
    await new Promise((r) => setTimeout(r, settleMs));
    const cpu0 = server.cpuMicros();
    await new Promise((r) => setTimeout(r, windowMs));
    return (server.cpuMicros() - cpu0) / windowMs;
  };
  const cluster = await sharedCluster(APPS);
  const { server } = await startSynced(cluster, { env: ctx.env });
  let shipped: number;
  try {
    shipped = await idleCpu(server);
  } finally {
    await server.stop();
  }
  const baselines: Record<string, number> = {};
  for (const kind of BASELINES) {
    const b = await startBaseline(kind, { nodeFlags: ctx.nodeFlags, env: ctx.env });
    try {
      await waitForStatus(b.opsPort, "/readyz", 200, 30_000);
      baselines[kind] = await idleCpu(b);
    } finally {
      await b.stop();
    }
  }
  const row: Row = {
    bench: `idle CPU, shipped process synced with 10k Apps (ms of CPU per second, ${windowMs / 1000} s from ${settleMs / 1000} s after ready)`,
    figure: `${fmt(shipped, 2)} ms/s`,
    baseline: BASELINES.map((k) => `${BASELINE_LABEL[k]} ${fmt(baselines[k]!, 2)} ms/s`).join("; "),
    ratio: "-",
    target: "reported",
    met: "-",
  };
  return { rows: [row], data: { apps: APPS, settleMs, windowMs, shipped, baselines } };
}
