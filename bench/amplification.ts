import { pino } from "pino";
import { parseServeConfig } from "../src/cli/config.ts";
import { startSidecar } from "../src/sidecar/sidecar.ts";
import type { SnapshotHolder } from "../src/snapshot/holder.ts";
import { findApp } from "../src/snapshot/lookup.ts";
import { serveFlags } from "../test/support/serve-flags.ts";
import { waitUntil } from "../test/support/wait.ts";
import { appSecret, appValue, startCluster, writeUnrelated, yieldToLoop } from "./cluster.ts";
import { metric } from "./http-probe.ts";
import { fmt, type Row } from "./measure.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const APPS = 1_000;

/**
 * Rebuilds caused by writes, counted with `mirror.stats()` on a sidecar started by `startSidecar`
 * in this process against envtest: 10,000 writes to Secrets no App references (2,000 in quick
 * mode; then one write to an App's Secret, whose Snapshot proves every earlier event was read),
 * and a burst of 1,000 writes to referenced Secrets, ten per event-loop turn.
 */
export async function benchAmplification(ctx: SuiteContext): Promise<SuiteOutput> {
  const unrelated = ctx.quick ? 2_000 : 10_000;
  const burst = 1_000;
  const cluster = await startCluster(APPS, 32);
  const config = parseServeConfig(
    serveFlags(cluster.kubeconfigPath, cluster.registryNamespace),
    {},
  );
  if (!config.ok) throw new Error(config.error);
  const started = await startSidecar(config.value, { logger: pino({ level: "silent" }) });
  if (!started.ok) throw new Error(started.error);
  const { mirror, holder } = started.value;
  try {
    await waitUntil(() => holder.current() !== null, { timeoutMs: 60_000, what: "a Snapshot" });
    await mirror.idle();
    const ignoredBefore = await metric(
      started.value.ops.port,
      "replica_mirror_ignored_events_total",
    );
    const s0 = mirror.stats();
    await writeUnrelated(cluster.envtest, unrelated, 256, "amp");
    await marker(cluster.envtest, holder, 0);
    await mirror.idle();
    const s1 = mirror.stats();
    const ignored =
      (await metric(started.value.ops.port, "replica_mirror_ignored_events_total")) - ignoredBefore;
    const unrelatedRebuilds = s1.rebuilds - s0.rebuilds - 1;

    for (let w = 0; w < burst; w++) {
      const i = w % APPS;
      cluster.envtest.apply({ ...appSecret(i), data: { token: appValue(i, 32, `b${w}-`) } });
      if (w % 10 === 9) await yieldToLoop();
    }
    await marker(cluster.envtest, holder, 1);
    await mirror.idle();
    const s2 = mirror.stats();
    // Every App of the burst ends at the value of its last write.
    for (let i = 0; i < Math.min(burst, APPS); i++) {
      const want = cluster.envtest.get(appSecret(i).namespace, appSecret(i).name)?.metadata
        .resourceVersion;
      const app = findApp(holder.current()!, `app-${i}`);
      if (app?.secretResourceVersion !== want) throw new Error(`app-${i} missed its last write`);
    }
    const burstRebuilds = s2.rebuilds - s1.rebuilds - 1;
    const rows: Row[] = [
      {
        bench: `rebuilds from ${unrelated} writes to unrelated Secrets (${APPS} Apps)`,
        figure: `${unrelatedRebuilds}`,
        baseline: `${ignored} events received and ignored; signals ${s1.signals - s0.signals - 1}`,
        ratio: "-",
        target: "0",
        met: unrelatedRebuilds === 0 && ignored === unrelated ? "yes" : "no",
      },
      {
        bench: `rebuilds from a burst of ${burst} writes to referenced Secrets (10 per loop turn)`,
        figure: `${burstRebuilds}`,
        baseline: `${burst} writes, ${s2.signals - s1.signals - 1} change signals`,
        ratio: `${fmt(burst / Math.max(1, burstRebuilds), 1)} writes per rebuild`,
        target: "bounded by the coalescer",
        met: burstRebuilds <= burst ? "yes" : "no",
      },
    ];
    return { rows, data: { unrelated, unrelatedRebuilds, ignored, burst, burstRebuilds } };
  } finally {
    await started.value.close();
    await cluster.close();
  }
}

/** Writes a new value for App `i`'s Secret and waits until the served Snapshot holds it. */
async function marker(
  envtest: Awaited<ReturnType<typeof startCluster>>["envtest"],
  holder: SnapshotHolder,
  i: number,
): Promise<void> {
  const written = envtest.apply({ ...appSecret(i), data: { token: `marker-${Date.now()}` } });
  await waitUntil(
    () =>
      findApp(holder.current()!, `app-${i}`)?.secretResourceVersion ===
      written.metadata.resourceVersion,
    { timeoutMs: 60_000, intervalMs: 2, what: "the mirror" },
  );
}
