import { BASELINE_LABEL, BASELINES, startBaseline } from "./baselines.ts";
import { sharedCluster } from "./cluster.ts";
import { waitForStatus } from "./http-probe.ts";
import { fmt, median, type Row } from "./measure.ts";
import { startSynced } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

/**
 * From spawning the shipped artifact (as the image runs it) to its first `/readyz` 200, against
 * envtest holding 1k, 10k and 100k Apps (or the `--apps` given; gzip Registry, a distinct 1 KiB Secret each), and from
 * spawning each baseline to its first 200; polled every millisecond, all rotating in rounds.
 */
export async function benchStartup(ctx: SuiteContext): Promise<SuiteOutput> {
  const sizes = ctx.apps ?? (ctx.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]);
  const rounds = ctx.quick ? 2 : 5;
  const clusters = new Map<number, Awaited<ReturnType<typeof sharedCluster>>>();
  for (const n of sizes) clusters.set(n, await sharedCluster(n));
  const subjects = [...BASELINES, ...sizes] as const;
  const times = new Map<(typeof subjects)[number], number[]>(subjects.map((s) => [s, []]));
  const rssAtReady = new Map<number, number[]>(sizes.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < subjects.length; i++) {
      const which = subjects[(i + r) % subjects.length]!;
      if (typeof which === "number") {
        const { server, readyMs } = await startSynced(clusters.get(which)!, { env: ctx.env });
        times.get(which)!.push(readyMs);
        rssAtReady.get(which)!.push(server.rss());
        await server.stop();
      } else {
        const server = await startBaseline(which, { nodeFlags: ctx.nodeFlags, env: ctx.env });
        await waitForStatus(server.opsPort, "/readyz", 200, 30_000, 1);
        times.get(which)!.push(performance.now() - server.spawnedAt);
        await server.stop();
      }
    }
  }
  const med = (s: (typeof subjects)[number]) => median(times.get(s)!);
  const fastify = med("fastify");
  const baseline = BASELINES.map((b) => `${BASELINE_LABEL[b]} ${fmt(med(b), 0)} ms`).join("; ");
  const rows: Row[] = sizes.map((n) => {
    const t = med(n);
    const targeted = n === 10_000;
    return {
      bench: `spawn → /readyz 200, shipped process, ${n / 1000}k Apps (gzip Registry), ${n / 1000}k distinct 1 KiB Secrets (median of ${rounds})`,
      figure: `${fmt(t, 0)} ms`,
      baseline,
      ratio: `${fmt(t / fastify, 2)}x fastify (+${fmt(t - fastify, 0)} ms)`,
      target: targeted ? "<= 2.5x fastify start (goal 2.0x)" : n === 100_000 ? "reported" : "-",
      met: targeted ? (t / fastify <= 2.5 ? "yes" : "no") : "-",
    };
  });
  const data = {
    rounds,
    baselines: Object.fromEntries(BASELINES.map((b) => [b, times.get(b)])),
    shipped: Object.fromEntries(
      sizes.map((n) => [n, { readyMs: times.get(n), rssAtReady: rssAtReady.get(n) }]),
    ),
  };
  return { rows, data };
}
