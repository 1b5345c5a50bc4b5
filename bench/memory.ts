import { BASELINE_LABEL, BASELINES, startBaseline } from "./baselines.ts";
import { closeSharedCluster, sharedCluster } from "./cluster.ts";
import { metric, waitForStatus } from "./http-probe.ts";
import { type LoadGenerator, startLoadGenerator, writeHostsFile } from "./load.ts";
import { fmt, type Row } from "./measure.ts";
import type { ServerProcess } from "./server-process.ts";
import { startSynced } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const MiB = 2 ** 20;
const KiB = 1024;
const SETTLE_MS = 3_000;

/** One measured start: how many Apps, and the bytes of each App Secret's value. */
interface Run {
  readonly apps: number;
  readonly valueBytes: number;
}

/** Memory of one process: resident set from /proc, V8 heap from its own `/metrics` if it has one. */
export interface MemoryReading {
  readonly rss: number;
  readonly heapUsed: number | null;
  readonly heapTotal: number | null;
}

/** Idle (after sync, or after start for a baseline) and after the load, plus the load's rate. */
export interface MemoryFigures {
  readonly idle: MemoryReading;
  readonly loaded: MemoryReading;
  readonly rps: number;
}

/**
 * Resident memory of the shipped process, read from /proc as the kubelet sees it (no forced
 * collection), and its V8 heap from `/metrics`: at 1k, 10k and 100k Apps (gzip Registry, a
 * distinct 1 KiB Secret each), 3 s after every App is ready, and right after 60 s of `/v1/route`
 * load (wrk, 10 connections, random hosts); each baseline the same way, idle and after the load.
 */
export async function benchMemory(ctx: SuiteContext): Promise<SuiteOutput> {
  const sizes = ctx.apps ?? (ctx.quick ? [10_000] : [1_000, 10_000, 100_000]);
  // The slope per KiB of values: the largest size again with 40-byte values.
  const runs: Run[] = (ctx.valueBytes ?? [KiB]).flatMap((valueBytes) =>
    sizes.map((apps) => ({ apps, valueBytes })),
  );
  if (ctx.valueBytes === undefined && !ctx.quick)
    runs.push({ apps: Math.max(...sizes), valueBytes: 40 });
  const seconds = ctx.quick ? 5 : 60;
  const load = await startLoadGenerator();
  try {
    const shipped = new Map<number, MemoryFigures>();
    const otherValues: Record<number, Record<number, MemoryFigures>> = {};
    for (const { apps: n, valueBytes } of runs) {
      const cluster = await sharedCluster(n, valueBytes);
      const { server } = await startSynced(cluster, { env: ctx.env });
      try {
        const m = await measure(server, load, seconds, writeHostsFile(n));
        if (valueBytes === KiB) shipped.set(n, m);
        else otherValues[valueBytes] = { ...otherValues[valueBytes], [n]: m };
      } finally {
        await server.stop();
      }
      // Seeding 100k Secrets again takes a while, but an envtest of them holds gigabytes.
      if (valueBytes !== KiB) await closeSharedCluster(n, valueBytes);
    }
    const baselines = new Map<string, MemoryFigures>();
    // Quick mode: only the baseline the targets name.
    for (const kind of ctx.quick ? (["fastify"] as const) : BASELINES) {
      const server = await startBaseline(kind, { nodeFlags: ctx.nodeFlags, env: ctx.env });
      try {
        await waitForStatus(server.opsPort, "/readyz", 200, 30_000);
        baselines.set(kind, await measure(server, load, seconds, writeHostsFile(10_000)));
      } finally {
        await server.stop();
      }
    }
    return {
      rows: [
        ...rows(shipped, baselines, seconds, ctx.quick),
        ...valueRows(shipped, otherValues, baselines),
      ],
      data: {
        seconds,
        shipped: Object.fromEntries(shipped),
        /** By value bytes, then Apps: runs with values of another size than 1 KiB. */
        otherValues,
        baselines: Object.fromEntries(baselines),
      },
    };
  } finally {
    await load.close();
  }
}

/** Idle readings after SETTLE_MS, then `seconds` of load, then the readings again. */
export async function measure(
  server: ServerProcess,
  load: LoadGenerator,
  seconds: number,
  hostsFile: string,
): Promise<MemoryFigures> {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const idle = await reading(server);
  const r = await load.run({
    port: server.dataPort,
    path: "/v1/route",
    seconds,
    connections: 10,
    hostsFile,
  });
  if (r.failures > 0) throw new Error(`${server.name}: ${r.failures} failed requests under load`);
  return { idle, loaded: await reading(server), rps: r.requests / r.seconds };
}

async function reading(server: ServerProcess): Promise<MemoryReading> {
  const rss = server.rss();
  if (server.opsPort === server.dataPort) return { rss, heapUsed: null, heapTotal: null };
  return {
    rss,
    heapUsed: await metric(server.opsPort, "nodejs_heap_size_used_bytes"),
    heapTotal: await metric(server.opsPort, "nodejs_heap_size_total_bytes"),
  };
}

const mib = (b: number | null) => (b === null ? "-" : `${fmt(b / MiB, 0)} MiB`);

function rows(
  shipped: Map<number, MemoryFigures>,
  baselines: Map<string, MemoryFigures>,
  seconds: number,
  quick: boolean,
): Row[] {
  const fastify = baselines.get("fastify")!;
  const list = (f: (m: MemoryFigures) => number) =>
    BASELINES.filter((b) => baselines.has(b))
      .map((b) => `${BASELINE_LABEL[b]} ${mib(f(baselines.get(b)!))}`)
      .join("; ");
  const loadLabel = `${seconds} s of routing load${quick ? " (quick mode: shortened)" : ""}`;
  const out: Row[] = [];
  for (const [n, m] of shipped) {
    const at = `${n / 1000}k Apps, ${n / 1000}k distinct 1 KiB Secrets`;
    const targeted = n === 10_000;
    const idleRatio = m.idle.rss / fastify.idle.rss;
    const loadedRatio = m.loaded.rss / fastify.loaded.rss;
    out.push(
      {
        bench: `RSS after sync, shipped process, ${at} (heap used / total ${mib(m.idle.heapUsed)} / ${mib(m.idle.heapTotal)})`,
        figure: mib(m.idle.rss),
        baseline: `idle: ${list((x) => x.idle.rss)}`,
        ratio: `${fmt(idleRatio, 2)}x fastify idle`,
        target: targeted ? "<= 1.7x fastify idle (goal 1.5x)" : "reported",
        met: targeted ? (idleRatio <= 1.7 ? "yes" : "no") : "-",
      },
      {
        bench: `RSS after ${loadLabel}, shipped process, ${at} (heap used / total ${mib(m.loaded.heapUsed)} / ${mib(m.loaded.heapTotal)}; ${fmt(m.rps, 0)} req/s)`,
        figure: mib(m.loaded.rss),
        baseline: `after the same load: ${list((x) => x.loaded.rss)}`,
        ratio: `${fmt(loadedRatio, 2)}x fastify after load`,
        target: "reported",
        met: "-",
      },
    );
  }
  return out;
}

/**
 * RSS after sync at another value size than 1 KiB, and the slope between the two at the same
 * number of Apps: what each KiB of every App's value costs, per 1k Apps.
 */
function valueRows(
  shipped: Map<number, MemoryFigures>,
  otherValues: Record<number, Record<number, MemoryFigures>>,
  baselines: Map<string, MemoryFigures>,
): Row[] {
  const fastify = baselines.get("fastify")!;
  const out: Row[] = [];
  for (const [bytes, byApps] of Object.entries(otherValues))
    for (const [apps, m] of Object.entries(byApps)) {
      const n = Number(apps);
      const at1k = shipped.get(n);
      const slope =
        at1k === undefined
          ? "-"
          : `${fmt((at1k.idle.rss - m.idle.rss) / MiB / ((KiB - Number(bytes)) / KiB) / (n / 1000), 2)} MiB per 1k Apps per KiB of value`;
      out.push({
        bench: `RSS after sync, shipped process, ${n / 1000}k Apps, ${n / 1000}k distinct ${bytes} B Secrets (heap used / total ${mib(m.idle.heapUsed)} / ${mib(m.idle.heapTotal)})`,
        figure: mib(m.idle.rss),
        baseline: at1k === undefined ? "-" : `1 KiB values: ${mib(at1k.idle.rss)}`,
        ratio: `${fmt(m.idle.rss / fastify.idle.rss, 2)}x fastify idle; ${slope}`,
        target: "reported",
        met: "-",
      });
    }
  return out;
}
