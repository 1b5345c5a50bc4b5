import { BASELINE_LABEL, BASELINES, startBaseline } from "./baselines.ts";
import { sharedCluster } from "./cluster.ts";
import { metric, waitForStatus } from "./http-probe.ts";
import { type LoadGenerator, startLoadGenerator, writeHostsFile } from "./load.ts";
import { fmt, type Row } from "./measure.ts";
import type { ServerProcess } from "./server-process.ts";
import { startSynced } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const MiB = 2 ** 20;
const SETTLE_MS = 3_000;

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
  const sizes = ctx.quick ? [10_000] : [1_000, 10_000, 100_000];
  const seconds = ctx.quick ? 5 : 60;
  const load = await startLoadGenerator();
  try {
    const shipped = new Map<number, MemoryFigures>();
    for (const n of sizes) {
      const cluster = await sharedCluster(n);
      const { server } = await startSynced(cluster, { env: ctx.env });
      try {
        shipped.set(n, await measure(server, load, seconds, writeHostsFile(n)));
      } finally {
        await server.stop();
      }
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
      rows: rows(shipped, baselines, seconds, ctx.quick),
      data: {
        seconds,
        shipped: Object.fromEntries(shipped),
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
