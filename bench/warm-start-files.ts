// What the warm-start suite puts on disk: the state key, kubeconfigs that name their client in
// envtest's request log (so each start's lists are counted apart from every other's), one for an
// API server that is not there, and the state file a synced run of the shipped process wrote.

import { randomBytes } from "node:crypto";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kubeconfigYaml, type Verb } from "@replica-mirror/envtest";
import { metricValue } from "../test/support/http.ts";
import { waitUntil } from "../test/support/wait.ts";
import { freePort } from "./child.ts";
import type { BenchCluster } from "./cluster.ts";
import { startSynced } from "./shipped.ts";

/** Writes 32 random bytes, mode 0600, to `dir/key` (the raw form the README's command creates). */
export function writeStateKey(dir: string): string {
  const path = join(dir, "key");
  writeFileSync(path, randomBytes(32), { mode: 0o600 });
  return path;
}

/**
 * The flags that keep the state file at `statePath`, sealed under the key at `keyPath`; after the
 * manifest's own (which name the pod's volumes), they replace them: of a repeated flag, the last wins.
 */
export const stateFlags = (statePath: string, keyPath: string): string[] => [
  `--state-file=${statePath}`,
  `--state-key-file=${keyPath}`,
];

/** A kubeconfig for `cluster` whose requests envtest's log counts under `client`. */
export async function clientKubeconfig(
  cluster: BenchCluster,
  dir: string,
  client: string,
): Promise<string> {
  const path = join(dir, `${client}.kubeconfig`);
  await cluster.envtest.writeKubeconfig(path, { client });
  return path;
}

/** A kubeconfig naming a loopback port nothing listens on: every connection is refused. */
export async function unreachableKubeconfig(dir: string): Promise<string> {
  const path = join(dir, "unreachable.kubeconfig");
  writeFileSync(path, kubeconfigYaml(`http://127.0.0.1:${await freePort()}`), { mode: 0o600 });
  return path;
}

/** How many requests of `verb` envtest received from `client` since its log was last cleared. */
export function requestsBy(cluster: BenchCluster, client: string, verb: Verb): number {
  return cluster.envtest.requests.summary().byClient[client]?.[verb]?.requests ?? 0;
}

/** Reads one sample of the sidecar's `/metrics` (undefined when it has none). */
export async function opsMetric(
  opsPort: number,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  return metricValue(text, name, labels);
}

/** A state file written by a synced shipped process, and what that run did. */
export interface PrimedState {
  readonly path: string;
  readonly bytes: number;
  /** Spawn to `/readyz` 200 of the priming run (a cold start), ms. */
  readonly readyMs: number;
  /** Lists and watches the priming run opened: a warm start should open the same watches only. */
  readonly lists: number;
  readonly watches: number;
  /** Whether SIGTERM wrote the file once more (it must: that is the write a restart reads). */
  readonly rewrittenOnStop: boolean;
}

/**
 * Runs the shipped process with the state file on until it is synced and has written the file,
 * then stops it with SIGTERM, which writes the file once more.
 */
export async function primeStateFile(
  cluster: BenchCluster,
  o: { dir: string; keyPath: string; env: Readonly<Record<string, string>> },
): Promise<PrimedState> {
  const client = "warm-start-prime";
  const path = join(o.dir, "primed.state");
  const { server, readyMs } = await startSynced(
    { ...cluster, kubeconfigPath: await clientKubeconfig(cluster, o.dir, client) },
    { env: o.env, extraArgs: stateFlags(path, o.keyPath) },
  );
  let writtenAt: number;
  try {
    await waitUntil(
      async () =>
        ((await opsMetric(server.opsPort, "replica_mirror_state_writes_total", {
          result: "written",
        })) ?? 0) >= 1,
      // The first write comes at most 5 s after the sync.
      { timeoutMs: 30_000, intervalMs: 50, what: "the state file written" },
    );
    writtenAt = statSync(path).mtimeMs;
  } finally {
    await server.stop(30_000);
  }
  if (!existsSync(path))
    throw new Error(`no state file at ${path}\n${server.output().slice(-2000)}`);
  const after = statSync(path);
  return {
    path,
    bytes: after.size,
    readyMs,
    lists: requestsBy(cluster, client, "list"),
    watches: requestsBy(cluster, client, "watch"),
    rewrittenOnStop: after.mtimeMs > writtenAt,
  };
}
