// A proxy in zero-hop mode with its own shipped sidecar: the shipped zero-hop configuration as
// the tests adapt it to a scratch directory and free ports (test/support/zero-hop-proxies.ts),
// and the sidecar started the image's way with the matching `--push-*` flags. Ready once the
// sidecar says the proxy holds the sidecar's revision (`/v1/snapshot` `proxies`).

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { waitUntil } from "../../test/support/wait.ts";
import {
  caddyLaunch,
  haproxyLaunch,
  nginxLaunch,
  type ProxyLaunch,
} from "../../test/support/zero-hop-proxies.ts";
import type { ClusterAddress } from "../cluster.ts";
import type { ServerProcess } from "../server-process.ts";
import { startSynced } from "../shipped.ts";
import { variantName } from "./proxies.ts";
import { type ProxyProcess, startProxy } from "./proxy-process.ts";

const LAUNCHES: Record<PlaneKind, (binary: string, dir: string) => Promise<ProxyLaunch>> = {
  nginx: nginxLaunch,
  caddy: caddyLaunch,
  haproxy: haproxyLaunch,
};

/** A zero-hop proxy and the sidecar that keeps its table. */
export interface ZeroHopPair {
  readonly proxy: ProxyProcess;
  /** Where it terminates TLS; null: it does not. */
  readonly tlsPort: number | null;
  readonly sidecar: ServerProcess;
  /** From the sidecar's spawn until the proxy held its revision, ms. */
  readonly tableMs: number;
  stop(): Promise<void>;
}

/**
 * Starts `kind`'s zero-hop configuration (its files in `dir`, which must exist) and a shipped
 * sidecar pushing to it, synced with `cluster`; resolves once the proxy answers from the table.
 */
export async function startZeroHopPair(
  kind: PlaneKind,
  o: {
    readonly cluster: ClusterAddress;
    readonly binary: string;
    readonly dir: string;
    readonly env: Readonly<Record<string, string>>;
    /** The sidecar's `--serve-credentials true` (ADR 53); default off. */
    readonly serveCredentials?: boolean;
    /** The sidecar's `--serve-certificates true` (ADR 56); default off. */
    readonly serveCertificates?: boolean;
    /** The proxy as launched; default `kind`'s shipped zero-hop launch in `dir`. */
    readonly launch?: ProxyLaunch;
    /** How the proxy is named in tables; default `variantName(kind, "zero-hop")`. */
    readonly name?: string;
  },
): Promise<ZeroHopPair> {
  const launch = o.launch ?? (await LAUNCHES[kind](o.binary, o.dir));
  await launch.prepare();
  const proxy = await startProxy({
    name: o.name ?? variantName(kind, "zero-hop"),
    command: launch.command,
    args: launch.args,
    env: launch.env,
    port: launch.port,
  });
  let sidecar: ServerProcess | null = null;
  try {
    sidecar = (
      await startSynced(o.cluster, {
        env: o.env,
        extraArgs: [
          ...launch.sidecarFlags,
          ...(o.serveCertificates === true ? ["--serve-certificates=true"] : []),
        ],
        serveCredentials: o.serveCredentials ?? false,
        name: `replica-mirror pushing to ${kind}`,
      })
    ).server;
    await waitForTables(sidecar.opsPort, 60_000);
    const started = sidecar;
    return {
      proxy,
      tlsPort: launch.tlsPort,
      sidecar,
      tableMs: performance.now() - sidecar.spawnedAt,
      stop: async () => {
        await started.stop();
        await proxy.stop();
      },
    };
  } catch (e) {
    const log = `${sidecar?.output().slice(-2000) ?? ""}${proxy.stderr()}`;
    await sidecar?.stop();
    await proxy.stop();
    throw new Error(`${kind} zero-hop: ${(e as Error).message}\n${log}`);
  }
}

/** What the bench reads of `/v1/snapshot`. */
interface SnapshotView {
  readonly revision: number;
  readonly proxies: readonly { readonly target: string; readonly revision: number | null }[];
}

/** Whether every proxy the sidecar pushes to holds `view`'s revision. */
export const proxiesHold = (view: SnapshotView): boolean =>
  view.revision > 0 &&
  view.proxies.length > 0 &&
  view.proxies.every((p) => p.revision === view.revision);

/**
 * Waits (bounded) until every proxy of the sidecar on `opsPort` holds the sidecar's revision;
 * resolves with that revision.
 */
export async function waitForTables(opsPort: number, timeoutMs: number): Promise<number> {
  return waitUntil(
    async () => {
      const res = await fetch(`http://127.0.0.1:${opsPort}/v1/snapshot`);
      const view = (await res.json()) as SnapshotView;
      return proxiesHold(view) ? view.revision : undefined;
    },
    { timeoutMs, intervalMs: 20, what: "the proxy to hold the sidecar's revision" },
  );
}
