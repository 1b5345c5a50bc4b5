// One Registry size under load: every proxy alone, in hop mode (asking one shipped sidecar) and in
// zero-hop mode (answering from the table its own shipped sidecar pushes), measured in rounds
// against the same upstream, each mode between two runs of the proxy alone (rounds.ts); and, when
// asked, some of those modes again with credentials on, in the same rounds as with them off, and
// their baselines again setting a fixed `Authorization` of the same size (what the header costs
// whatever sets it).

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type PlaneKind, through, writeShippedConfig } from "../../test/support/data-plane.ts";
import { freePort } from "../child.ts";
import type { ClusterAddress } from "../cluster.ts";
import { type LoadGenerator, writeHostsFile } from "../load.ts";
import { type RoundGroup, sandwiched } from "../rounds.ts";
import type { ServerProcess } from "../server-process.ts";
import { startSynced } from "../shipped.ts";
import type { SuiteContext } from "../suite.ts";
import { writeAloneConfig } from "./configs.ts";
import { bytesLabel, fixedAuthorization } from "./credentials.ts";
import type { CpuSplit, SizeData } from "./data.ts";
import { type Measured, measure } from "./measured.ts";
import {
  type Baseline,
  credentialRuns,
  credentialsName,
  PROXIES,
  type ShippedVariant,
  variantName,
} from "./proxies.ts";
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

/** The same cluster through a Registry whose Apps carry a credential of `bytes` (`withRegistry`). */
export interface Credentialed {
  readonly cluster: ClusterAddress;
  readonly bytes: number;
}

/** What a load phase measures besides every proxy's three variants. */
export interface LoadExtras {
  /**
   * Per credential size, the variants of CREDENTIAL_VARIANTS run again with credentials on, each
   * beside its run with them off between the same two runs of the proxy alone; and that proxy
   * alone setting `fixedAuthorization` of the size (`headerName`), run beside them too.
   */
  readonly credentialed?: readonly Credentialed[];
}

/** Every proxy in its three variants at `cluster`'s size; stops what it started. */
export async function benchLoad(
  cluster: ClusterAddress,
  o: PhaseOptions,
  extras: LoadExtras = {},
): Promise<SizeData> {
  const proxies: ProxyProcess[] = [];
  const pairs: ZeroHopPair[] = [];
  const sidecars: ServerProcess[] = [];
  try {
    const synced = await startSynced(cluster, { env: o.ctx.env });
    sidecars.push(synced.server);
    const credentialed = extras.credentialed ?? [];
    const sizes = credentialed.map((c) => c.bytes);
    // Per size, one hop sidecar serving credentials, as the one above serves without.
    const credentialSidecars = new Map<number, ServerProcess>();
    for (const c of credentialed) {
      const { server } = await startSynced(c.cluster, {
        env: o.ctx.env,
        serveCredentials: true,
        name: `replica-mirror, ${bytesLabel(c.bytes)} credentials`,
      });
      sidecars.push(server);
      credentialSidecars.set(c.bytes, server);
    }
    const measured: Measured[] = [];
    const groups: RoundGroup[] = [];
    const zeroHopTableMs: Partial<Record<PlaneKind, number>> = {};
    const credentialsLeftOut: Record<string, string> = {};
    const measuring = (proxy: ProxyProcess, sidecarPid: number | null) => {
      const m = measure(proxy, sidecarPid);
      measured.push(m);
      return m.server;
    };
    const zeroHopPair = async (kind: PlaneKind, on?: Credentialed) => {
      const pair = await startZeroHopPair(kind, {
        cluster: on?.cluster ?? cluster,
        binary: o.binaries[kind],
        dir: await scratch(o, `${kind}-zero-hop-${on?.bytes ?? "plain"}-${cluster.apps}`),
        env: o.ctx.env,
        serveCredentials: on !== undefined,
        name:
          on === undefined
            ? variantName(kind, "zero-hop")
            : credentialsName(kind, "zero-hop", on.bytes),
      });
      pairs.push(pair);
      return pair;
    };
    for (const { kind, zeroHopBaseline } of PROXIES) {
      const started = async (
        variant: Baseline | "hop",
        sidecar = synced.server,
        how: VariantOptions = {},
      ) => {
        const proxy = await startVariant(kind, variant, o, sidecar.dataPort, how);
        proxies.push(proxy);
        return proxy;
      };
      const alone = measuring(await started("alone"), null);
      const hop = measuring(await started("hop"), synced.server.pid);
      const pooled =
        zeroHopBaseline === "alone" ? alone : measuring(await started(zeroHopBaseline), null);
      const pair = await zeroHopPair(kind);
      zeroHopTableMs[kind] = pair.tableMs;
      const zeroHop = measuring(pair.proxy, pair.sidecar.pid);
      const on: Record<ShippedVariant, ServerProcess[]> = { hop: [], "zero-hop": [] };
      for (const r of credentialRuns(kind, sizes)) {
        if (r.run === "header") {
          const how = { name: r.name, authorizationBytes: r.bytes };
          on[r.variant].push(measuring(await started(r.baseline, synced.server, how), null));
          continue;
        }
        const c = credentialed.find((c) => c.bytes === r.bytes)!;
        const sidecar = credentialSidecars.get(c.bytes)!;
        const [proxy, sidecarPid] =
          r.variant === "hop"
            ? [await started("hop", sidecar, { name: r.name }), sidecar.pid]
            : await zeroHopPair(kind, c).then((p) => [p.proxy, p.sidecar.pid] as const);
        // A configuration that does not serve an App with a credential yet answers 503: such a
        // variant would void every round, so it is left out, and the reason reported.
        const refused = await refusesCredentialApps(proxy.port);
        if (refused === null) on[r.variant].push(measuring(proxy, sidecarPid));
        else credentialsLeftOut[r.name] = refused;
      }
      const hops = [hop, ...on.hop];
      const zeroHops = [zeroHop, ...on["zero-hop"]];
      if (pooled === alone) groups.push({ baseline: alone, variants: [...hops, ...zeroHops] });
      else
        groups.push({ baseline: alone, variants: hops }, { baseline: pooled, variants: zeroHops });
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
      const said = [...servers, ...sidecars, ...pairs.map((p) => p.sidecar)]
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
      ...(credentialed.length === 0 ? {} : { credentialBytes: sizes, credentialsLeftOut }),
    };
  } finally {
    await Promise.all([...proxies.map((p) => p.stop()), ...pairs.map((p) => p.stop())]);
    await Promise.all(sidecars.map((s) => s.stop()));
  }
}

/**
 * Null when the proxy on `port` routes the bench Registry's first App (200), else what it
 * answered instead.
 */
async function refusesCredentialApps(port: number): Promise<string | null> {
  const answer = await through(port, { host: "app-0.example.com", path: "/" });
  return answer.status === 200
    ? null
    : `answered ${answer.status} ${answer.reason ?? ""} to an App with a credential`.trim();
}

/** A new directory under the run's scratch directory. */
export async function scratch(o: PhaseOptions, name: string): Promise<string> {
  const dir = join(o.dir, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** How `startVariant` names a variant, and what a proxy alone adds to every upstream request. */
export interface VariantOptions {
  /** In tables; default `variantName(kind, variant)`. */
  readonly name?: string;
  /** Alone only: sets `fixedAuthorization` of these bytes on every upstream request. */
  readonly authorizationBytes?: number;
}

/** `kind` alone, or with its shipped hop configuration asking the sidecar on `sidecarPort`. */
export async function startVariant(
  kind: PlaneKind,
  variant: Baseline | "hop",
  o: PhaseOptions,
  sidecarPort: number,
  how: VariantOptions = {},
): Promise<ProxyProcess> {
  const bytes = how.authorizationBytes;
  const dir = await scratch(
    o,
    `${kind}-${variant}-${sidecarPort}${bytes === undefined ? "" : `-${bytes}`}`,
  );
  const port = await freePort();
  const launch =
    variant === "hop"
      ? await writeShippedConfig(kind, { port, dir, sidecarPort })
      : await writeAloneConfig(kind, {
          port,
          dir,
          upstreamPort: Number(new URL(o.upstream.url).port),
          pooled: variant === "alone-pooled",
          ...(bytes === undefined ? {} : { authorization: fixedAuthorization(bytes) }),
        });
  return startProxy({
    name: how.name ?? variantName(kind, variant),
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
