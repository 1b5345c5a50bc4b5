// One Registry size under load: every proxy alone, in hop mode (asking one shipped sidecar) and in
// zero-hop mode (answering from the table its own shipped sidecar pushes), measured in rounds
// against the same upstream, each mode between two runs of the proxy alone (rounds.ts).

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type PlaneKind, writeShippedConfig } from "../../test/support/data-plane.ts";
import { freePort } from "../child.ts";
import type { BenchCluster } from "../cluster.ts";
import { type LoadGenerator, writeHostsFile } from "../load.ts";
import { type RoundGroup, sandwiched } from "../rounds.ts";
import type { ServerProcess } from "../server-process.ts";
import { startSynced } from "../shipped.ts";
import type { SuiteContext } from "../suite.ts";
import { writeAloneConfig } from "./configs.ts";
import type { CpuSplit, SizeData } from "./data.ts";
import { type Measured, measure } from "./measured.ts";
import { type Baseline, PROXIES, variantName } from "./proxies.ts";
import { type ProxyProcess, startProxy } from "./proxy-process.ts";
import type { Upstream } from "./upstream.ts";
import { startZeroHopPair, type ZeroHopPair } from "./zero-hop.ts";

/** What every phase of the suite shares. */
export interface PhaseOptions {
  readonly ctx: SuiteContext;
  readonly binaries: Record<PlaneKind, string>;
  /** The run's scratch directory. */
  readonly dir: string;
  readonly upstream: Upstream;
  readonly load: LoadGenerator;
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
}

/** Every proxy in its three variants at `cluster`'s size; stops what it started. */
export async function benchLoad(cluster: BenchCluster, o: PhaseOptions): Promise<SizeData> {
  const proxies: ProxyProcess[] = [];
  const pairs: ZeroHopPair[] = [];
  let sidecar: ServerProcess | null = null;
  try {
    const synced = await startSynced(cluster, { env: o.ctx.env });
    const shared = synced.server;
    sidecar = shared;
    const measured: Measured[] = [];
    const groups: RoundGroup[] = [];
    const zeroHopTableMs: Partial<Record<PlaneKind, number>> = {};
    for (const { kind, zeroHopBaseline } of PROXIES) {
      const started = async (variant: Baseline | "hop") => {
        const proxy = await startVariant(kind, variant, o, shared.dataPort);
        proxies.push(proxy);
        const m = measure(proxy, variant === "hop" ? shared.pid : null);
        measured.push(m);
        return m.server;
      };
      const alone = await started("alone");
      const hop = await started("hop");
      const pooled = zeroHopBaseline === "alone" ? alone : await started(zeroHopBaseline);
      const dir = await scratch(o, `${kind}-zero-hop-${cluster.apps}`);
      const pair = await startZeroHopPair(kind, {
        cluster,
        binary: o.binaries[kind],
        dir,
        env: o.ctx.env,
      });
      pairs.push(pair);
      zeroHopTableMs[kind] = pair.tableMs;
      const zeroHop = measure(pair.proxy, pair.sidecar.pid);
      measured.push(zeroHop);
      if (pooled === alone) groups.push({ baseline: alone, variants: [hop, zeroHop.server] });
      else
        groups.push(
          { baseline: alone, variants: [hop] },
          { baseline: pooled, variants: [zeroHop.server] },
        );
    }
    const hostsFile = writeHostsFile(cluster.apps);
    const upstreamConnectionsPerRequest: Record<string, number> = {};
    for (const m of measured)
      upstreamConnectionsPerRequest[m.server.name] = await probeUpstream(m.server, o, hostsFile);
    const servers = measured.map((m) => m.server);
    const runs = await sandwiched(groups, {
      load: o.load,
      rounds: o.rounds,
      seconds: o.seconds,
      connections: o.connections,
      hostsFile,
    }).catch((e: unknown) => {
      // A failed request voids the run: what the proxies and sidecars said may tell why.
      const said = [...servers, synced.server, ...pairs.map((p) => p.sidecar)]
        .map((s) => `--- ${s.name}\n${s.output().slice(-1500)}`)
        .join("\n");
      throw new Error(`${(e as Error).message}\n${said}`);
    });
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
      zeroHopTableMs,
    };
  } finally {
    await Promise.all([...proxies.map((p) => p.stop()), ...pairs.map((p) => p.stop())]);
    await sidecar?.stop();
  }
}

/** A new directory under the run's scratch directory. */
export async function scratch(o: PhaseOptions, name: string): Promise<string> {
  const dir = join(o.dir, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** `kind` alone, or with its shipped hop configuration asking the sidecar on `sidecarPort`. */
export async function startVariant(
  kind: PlaneKind,
  variant: Baseline | "hop",
  o: PhaseOptions,
  sidecarPort: number,
): Promise<ProxyProcess> {
  const dir = await scratch(o, `${kind}-${variant}-${sidecarPort}`);
  const port = await freePort();
  const launch =
    variant === "hop"
      ? await writeShippedConfig(kind, { port, dir, sidecarPort })
      : await writeAloneConfig(kind, {
          port,
          dir,
          upstreamPort: Number(new URL(o.upstream.url).port),
          pooled: variant === "alone-pooled",
        });
  return startProxy({
    name: variantName(kind, variant),
    command: o.binaries[kind],
    args: launch.args,
    env: launch.env,
    port,
  });
}

/** A one-second run at `server`: the upstream's accepted connections per request it served. */
async function probeUpstream(
  server: ServerProcess,
  o: PhaseOptions,
  hostsFile: string,
): Promise<number> {
  const before = await o.upstream.counts();
  await o.load.run({
    port: server.dataPort,
    path: "/",
    seconds: 1,
    connections: o.connections,
    hostsFile,
  });
  const after = await o.upstream.counts();
  return (after.accepts - before.accepts) / Math.max(1, after.requests - before.requests);
}
