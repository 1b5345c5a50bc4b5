import { sharedCluster } from "./cluster.ts";
import { metric } from "./http-probe.ts";
import { startLoadGenerator, writeHostsFile } from "./load.ts";
import { fmt, median, type Row } from "./measure.ts";
import { alternate, medianRatio } from "./rounds.ts";
import type { ServerProcess } from "./server-process.ts";
import { startSynced } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const APPS = 10_000;
const MiB = 2 ** 20;

/** V8 flags that trade throughput for memory, each tried alone on the shipped artifact. */
export const VARIANTS: readonly (readonly string[])[] = [
  [],
  ["--max-semi-space-size=1"],
  ["--max-semi-space-size=2"],
  ["--max-semi-space-size=4"],
  ["--max-semi-space-size=8"],
  ["--optimize-for-size"],
  ["--no-opt"],
  ["--optimize-for-size", "--no-opt"],
];

const label = (flags: readonly string[]) => (flags.length === 0 ? "V8 defaults" : flags.join(" "));

/**
 * The shipped artifact at 10k Apps (distinct 1 KiB Secrets) under each set of V8 flags: RSS and
 * heap after sync, then alternating rounds of `/v1/route` load (wrk, 10 connections) across all
 * variants, then RSS again. Throughput ratios are against the run with V8's defaults, round by round.
 */
export async function benchV8Flags(ctx: SuiteContext): Promise<SuiteOutput> {
  const rounds = ctx.quick ? 1 : 5;
  const seconds = ctx.quick ? 1 : 4;
  const cluster = await sharedCluster(APPS);
  const load = await startLoadGenerator();
  const servers: ServerProcess[] = [];
  try {
    const idle = new Map<string, { rss: number; heapUsed: number }>();
    // Quick mode: V8's defaults against the image's flags only.
    const variants = ctx.quick
      ? [[], ...(ctx.nodeFlags.length > 0 ? [ctx.nodeFlags] : [])]
      : VARIANTS;
    for (const flags of variants) {
      const { server } = await startSynced(cluster, { nodeFlags: flags, env: ctx.env });
      servers.push({ ...server, name: label(flags) });
    }
    await new Promise((r) => setTimeout(r, 3_000));
    for (const s of servers)
      idle.set(s.name, {
        rss: s.rss(),
        heapUsed: await metric(s.opsPort, "nodejs_heap_size_used_bytes"),
      });
    const runs = await alternate(servers, {
      load,
      rounds,
      seconds,
      connections: 10,
      hostsFile: writeHostsFile(APPS),
    });
    const loaded = new Map(servers.map((s) => [s.name, s.rss()]));
    const base = runs.get(label([]))!;
    const data = servers.map((s) => ({
      flags: s.name,
      rssAfterSync: idle.get(s.name)!.rss,
      heapUsedAfterSync: idle.get(s.name)!.heapUsed,
      rssAfterLoad: loaded.get(s.name)!,
      rps: median(runs.get(s.name)!.map((r) => r.rps)),
      rpsRatio: medianRatio(runs.get(s.name)!, base, (r) => r.rps),
      cpuPerRequestUs: median(runs.get(s.name)!.map((r) => r.cpuPerRequestUs)),
    }));
    const chosen = label(ctx.nodeFlags);
    const rows: Row[] = data.map((d) => ({
      bench: `V8 flags: ${d.flags}${d.flags === chosen ? " (the image's)" : ""}, 10k Apps: RSS after sync / after ${rounds + 1} x ${seconds} s of load; heap used`,
      figure: `${fmt(d.rssAfterSync / MiB, 0)} / ${fmt(d.rssAfterLoad / MiB, 0)} MiB; ${fmt(d.heapUsedAfterSync / MiB, 0)} MiB`,
      baseline: `${fmt(d.rps, 0)} req/s, ${fmt(d.cpuPerRequestUs, 1)} µs CPU per request`,
      ratio: `${fmt(d.rpsRatio, 2)}x the req/s of V8 defaults`,
      target: "-",
      met: "-",
    }));
    return { rows, data: { apps: APPS, rounds, seconds, variants: data } };
  } finally {
    await load.close();
    await Promise.all(servers.map((s) => s.stop()));
  }
}
