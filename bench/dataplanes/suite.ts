// What a user's data plane pays for the sidecar: each real proxy with its shipped configuration
// asking the shipped sidecar (synced against envtest) on every request, against the same proxy
// routing every host straight to the same upstream, in alternating rounds of one run.

import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPlane, type PlaneKind, writeShippedConfig } from "../../test/support/data-plane.ts";
import { freePort } from "../child.ts";
import { startCluster } from "../cluster.ts";
import { type LoadGenerator, startLoadGenerator, writeHostsFile } from "../load.ts";
import { cpuMicros, rssBytes } from "../proc-stats.ts";
import { alternate, type RunResult } from "../rounds.ts";
import type { ServerProcess } from "../server-process.ts";
import { startSynced } from "../shipped.ts";
import type { SuiteContext, SuiteOutput } from "../suite.ts";
import { writeAloneConfig } from "./configs.ts";
import { PROXIES, planeVersion, type Variant, variantName } from "./proxies.ts";
import { type ProxyProcess, startProxy } from "./proxy-process.ts";
import { dataplaneRows } from "./report.ts";
import { startUpstream, type Upstream } from "./upstream.ts";

/** One hop-mode run's CPU per request, split between the proxy and the sidecar. */
export interface CpuSplit {
  readonly proxyUs: number;
  readonly sidecarUs: number;
}

/** What one Registry size measured. */
export interface SizeData {
  /** By `variantName`: each round's run (the warm-up left out). */
  readonly runs: Record<string, RunResult[]>;
  /** By `variantName` of a hop variant: each round's CPU split. */
  readonly split: Record<string, CpuSplit[]>;
  /** By `variantName`: connections the upstream accepted per request it served (a probe run). */
  readonly upstreamConnectionsPerRequest: Record<string, number>;
  /** The sidecar's spawn to `/readyz` 200, ms. */
  readonly sidecarReadyMs: number;
}

/** The suite's saved data (`bench/results/dataplanes.json`). */
export interface DataplanesData {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly load: string;
  readonly upstream: string;
  readonly versions: Record<PlaneKind, string>;
  /** By number of Apps. */
  readonly sizes: Record<string, SizeData>;
}

const CONNECTIONS = 32;

/** The data-plane suite: every proxy alone and in hop mode at 1k and 10k Apps (1k when quick). */
export async function benchDataplanes(ctx: SuiteContext): Promise<SuiteOutput> {
  // An odd number of rounds, so that a median ratio is one round's ratio.
  const rounds = ctx.quick ? 1 : 5;
  const seconds = ctx.quick ? 1 : 3;
  const sizes = ctx.quick ? [1_000] : [1_000, 10_000];
  const binaries = Object.fromEntries(
    PROXIES.map(({ kind }) => {
      const tool = findPlane(kind);
      if (tool.path === undefined) throw new Error(`${kind}: ${tool.missing}`);
      return [kind, tool.path];
    }),
  ) as Record<PlaneKind, string>;
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-bench-dataplanes-"));
  const upstream = await startUpstream(binaries.nginx, dir);
  const load = await startLoadGenerator();
  const data: DataplanesData = {
    rounds,
    seconds,
    connections: CONNECTIONS,
    load: load.name,
    upstream: "nginx, 2 workers, `return 200` (the same server for every variant)",
    versions: Object.fromEntries(
      PROXIES.map(({ kind }) => [kind, planeVersion(kind, binaries[kind])]),
    ) as Record<PlaneKind, string>,
    sizes: {},
  };
  try {
    for (const apps of sizes) {
      const size = await benchSize(apps, { ctx, binaries, dir, upstream, load, rounds, seconds });
      (data.sizes as Record<string, SizeData>)[apps] = size;
    }
  } finally {
    await load.close();
    await upstream.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return { rows: dataplaneRows(data), data };
}

interface SizeOptions {
  readonly ctx: SuiteContext;
  readonly binaries: Record<PlaneKind, string>;
  readonly dir: string;
  readonly upstream: Upstream;
  readonly load: LoadGenerator;
  readonly rounds: number;
  readonly seconds: number;
}

async function benchSize(apps: number, o: SizeOptions): Promise<SizeData> {
  const cluster = await startCluster(apps, 1024, { upstream: o.upstream.url });
  const proxies: ProxyProcess[] = [];
  let sidecar: ServerProcess | null = null;
  try {
    const synced = await startSynced(cluster, { env: o.ctx.env });
    sidecar = synced.server;
    const measured: Measured[] = [];
    for (const { kind } of PROXIES) {
      for (const variant of ["alone", "hop"] as const) {
        const proxy = await startVariant(kind, variant, o, sidecar.dataPort);
        proxies.push(proxy);
        measured.push(measure(proxy, variant === "hop" ? sidecar.pid : null));
      }
    }
    const hostsFile = writeHostsFile(apps);
    const upstreamConnectionsPerRequest: Record<string, number> = {};
    for (const m of measured)
      upstreamConnectionsPerRequest[m.server.name] = await probeUpstream(m.server, o, hostsFile);
    const runs = await alternate(
      measured.map((m) => m.server),
      { load: o.load, rounds: o.rounds, seconds: o.seconds, connections: CONNECTIONS, hostsFile },
    );
    const split: Record<string, CpuSplit[]> = {};
    for (const m of measured) {
      if (!m.withSidecar) continue;
      split[m.server.name] = m.splits(runs.get(m.server.name)!);
    }
    return {
      runs: Object.fromEntries(runs),
      split,
      upstreamConnectionsPerRequest,
      sidecarReadyMs: synced.readyMs,
    };
  } finally {
    await Promise.all(proxies.map((p) => p.stop()));
    await sidecar?.stop();
    await cluster.close();
  }
}

async function startVariant(
  kind: PlaneKind,
  variant: Variant,
  o: SizeOptions,
  sidecarPort: number,
): Promise<ProxyProcess> {
  const dir = join(o.dir, `${kind}-${variant}-${sidecarPort}`);
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const launch =
    variant === "alone"
      ? await writeAloneConfig(kind, {
          port,
          dir,
          upstreamPort: Number(new URL(o.upstream.url).port),
        })
      : await writeShippedConfig(kind, { port, dir, sidecarPort });
  return startProxy({
    name: variantName(kind, variant),
    command: o.binaries[kind],
    args: launch.args,
    env: launch.env,
    port,
  });
}

/** A proxy as `alternate` measures it, and the CPU readings it took. */
interface Measured {
  readonly server: ServerProcess;
  readonly withSidecar: boolean;
  /** Each round's CPU per request split, given the rounds' runs (the warm-up's left out). */
  splits(runs: readonly RunResult[]): CpuSplit[];
}

/**
 * The proxy as a `ServerProcess` whose CPU is the proxy's plus the sidecar's (`sidecarPid`) when
 * it asks one. `alternate` reads the CPU just before and just after each run, the warm-up first,
 * so the last readings pair up with the rounds' runs.
 */
function measure(proxy: ProxyProcess, sidecarPid: number | null): Measured {
  const readings: CpuSplit[] = [];
  const sidecarCpu = () => (sidecarPid === null ? 0 : cpuMicros(sidecarPid));
  const server: ServerProcess = {
    name: proxy.name,
    pid: proxy.pid,
    dataPort: proxy.port,
    opsPort: proxy.port,
    spawnedAt: 0,
    rss: () => rssBytes(proxy.pid),
    cpuMicros() {
      const reading = { proxyUs: proxy.cpuMicros(), sidecarUs: sidecarCpu() };
      readings.push(reading);
      return reading.proxyUs + reading.sidecarUs;
    },
    output: proxy.stderr,
    stop: () => proxy.stop(),
  };
  return {
    server,
    withSidecar: sidecarPid !== null,
    splits: (runs) => {
      const rounds = readings.slice(-2 * runs.length);
      return runs.map((run, i) => {
        const [before, after] = [rounds[2 * i]!, rounds[2 * i + 1]!];
        return {
          proxyUs: (after.proxyUs - before.proxyUs) / run.requests,
          sidecarUs: (after.sidecarUs - before.sidecarUs) / run.requests,
        };
      });
    },
  };
}

/** A one-second run at `server`: the upstream's accepted connections per request it served. */
async function probeUpstream(
  server: ServerProcess,
  o: SizeOptions,
  hostsFile: string,
): Promise<number> {
  const before = await o.upstream.counts();
  await o.load.run({
    port: server.dataPort,
    path: "/",
    seconds: 1,
    connections: CONNECTIONS,
    hostsFile,
  });
  const after = await o.upstream.counts();
  return (after.accepts - before.accepts) / Math.max(1, after.requests - before.requests);
}
