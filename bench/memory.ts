import { ask, forkChild, stopChild } from "./child.ts";
import {
  appSecret,
  REGISTRY_NAMESPACE,
  seedApps,
  startCluster,
  writeUnrelated,
} from "./cluster.ts";
import { fmt, pct, type Row } from "./measure.ts";
import type { MemoryReadings } from "./memory-child.ts";

const APPS = 10_000;
const MiB = 2 ** 20;

/**
 * Resident set and heap after full collections: the sidecar (`startSidecar` in its own process)
 * synced with 10k Apps holding 1 KiB values, then after 50,000 unrelated 4 KiB Secrets were
 * written to the cluster; the same for @kubernetes/client-node's makeInformer on every Secret,
 * in another process, watching the same envtest (which runs in this process) at the same time.
 */
export async function benchMemory(quick: boolean): Promise<Row[]> {
  const unrelated = quick ? 10_000 : 50_000;
  const cluster = await startCluster();
  await seedApps(cluster.envtest, APPS, 1024);
  const args = [cluster.kubeconfigPath, REGISTRY_NAMESPACE];
  const mirror = forkChild("./memory-child.ts", ["mirror", ...args], ["--expose-gc"]);
  const informer = forkChild("./memory-child.ts", ["informer", ...args], ["--expose-gc"]);
  try {
    await Promise.all([ask(mirror), ask(informer)]);
    // One process at a time, so a collection in one does not slow the other's.
    const measure = async () => ({
      mirror: await ask<MemoryReadings>(mirror, "measure"),
      informer: await ask<MemoryReadings>(informer, "measure"),
    });
    await ask(informer, { count: APPS + 1 });
    const before = await measure();

    await writeUnrelated(cluster.envtest, unrelated, 4096);
    // A last write to an App's Secret: once the mirror serves it, it has read every event before.
    const marker = cluster.envtest.apply({ ...appSecret(0), data: { token: "m".repeat(1024) } });
    await Promise.all([
      ask(mirror, { app: "app-0", resourceVersion: marker.metadata.resourceVersion }, 600_000),
      ask(informer, { count: APPS + 1 + unrelated }, 600_000),
    ]);
    const after = await measure();

    if (process.env.BENCH_DEBUG) console.error(JSON.stringify({ before, after }));
    type Who = "mirror" | "informer";
    const held = (k: Who, when: typeof before, f: "heapUsed" | "rss") => when[k].compacted[f];
    const grow = (k: Who, f: "heapUsed" | "rss") => held(k, after, f) - held(k, before, f);
    const mb = (b: number) => `${fmt(b / MiB, 1)} MiB`;
    const heapShare = grow("mirror", "heapUsed") / held("mirror", before, "heapUsed");
    const rssShare = grow("mirror", "rss") / held("mirror", before, "rss");
    const peak = (k: Who) => after[k].regular.rss - before[k].regular.rss;
    return [
      {
        bench: `memory after sync, ${APPS / 1000}k Apps with 1 KiB values: heap / RSS`,
        figure: `${mb(held("mirror", before, "heapUsed"))} / ${mb(held("mirror", before, "rss"))}`,
        baseline: `client-node makeInformer, same Secrets: ${mb(held("informer", before, "heapUsed"))} / ${mb(held("informer", before, "rss"))}`,
        ratio: `heap ${fmt(held("mirror", before, "heapUsed") / held("informer", before, "heapUsed"), 2)}x the informer's`,
        target: "-",
        met: "-",
      },
      {
        bench: `memory added by ${unrelated / 1000}k unrelated 4 KiB Secrets: heap / RSS`,
        figure: `+${mb(grow("mirror", "heapUsed"))} (${pct(heapShare)}) / +${mb(grow("mirror", "rss"))} (${pct(rssShare)})`,
        baseline: `makeInformer: +${mb(grow("informer", "heapUsed"))} / +${mb(grow("informer", "rss"))}`,
        ratio: `${fmt(grow("informer", "heapUsed") / Math.max(grow("mirror", "heapUsed"), MiB / 10), 0)}x less heap growth`,
        target: "< 10% added",
        met: heapShare < 0.1 && rssShare < 0.1 ? "yes" : "no",
      },
      {
        bench:
          "RSS added by the same writes, after regular collections only (pages the burst touched)",
        figure: `+${mb(peak("mirror"))}`,
        baseline: `makeInformer: +${mb(peak("informer"))}`,
        ratio: `${fmt(peak("informer") / Math.max(peak("mirror"), MiB / 10), 2)}x`,
        target: "-",
        met: "-",
      },
    ];
  } finally {
    await Promise.all([stopChild(mirror), stopChild(informer)]);
    await cluster.close();
  }
}
