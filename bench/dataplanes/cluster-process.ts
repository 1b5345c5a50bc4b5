// The data-plane suite's cluster: envtest holding the seeded world in a child process of its own
// (cluster-child.ts), so that the bench process, which asks the proxies every millisecond, holds
// no 100k-Secret heap, and its collections and event-loop stalls are not timed as the sidecar's.

import { fileURLToPath } from "node:url";
import type { ClusterAddress } from "../cluster.ts";
import { localTime, startCommandChild } from "../command-child.ts";
import type { RegistryOptions } from "../fixtures.ts";
import { cpuMicros } from "../proc-stats.ts";

/**
 * The child's V8 flags. Without its memory reducer: seconds after the seeding and after each
 * sidecar's initial list, the reducer ran full collections of the 100k-Secret heap (170 ms of
 * marking in steps of up to 18 ms each, on the thread that stores a write and sends its watch
 * events; --trace-gc, 12-07 13:25Z), and the first rotations timed then were the slowest of the
 * run. The fake API server's collector is not the product's cost, and a Go API server's marks
 * concurrently with it.
 */
const CHILD_FLAGS = ["--max-old-space-size=8192", "--no-memory-reducer"];

/** One Secret written whole (string values only: the channel carries JSON). */
export interface SecretWrite {
  readonly namespace: string;
  readonly name: string;
  readonly data: Readonly<Record<string, string>>;
}

/** What the child seeds: `startCluster`'s arguments. */
export interface ClusterSetup {
  readonly apps: number;
  readonly valueBytes: number;
  readonly registry: RegistryOptions;
  readonly keys: Readonly<Record<string, number>>;
}

/** The commands the child answers, with their arguments and answers. */
export interface ClusterCommands {
  /** Writes the Secrets in order; answers `sharedClockMs` just before the first was written. */
  write: [{ secrets: readonly SecretWrite[] }, { startedMs: number }];
  /** Writes a second Registry of the same Apps into `namespace` (`withRegistry`). */
  registry: [{ namespace: string; options: RegistryOptions }, Record<string, never>];
}

/** The child's first message. */
export interface ClusterReady {
  readonly kubeconfigPath: string;
  readonly registryNamespace: string;
}

/** The handle the suite holds. */
export interface WorldCluster extends ClusterAddress {
  /**
   * Writes `secrets` in order and resolves once the API server stored them, with this process's
   * `performance.now()` just before the first was written: a timed write's t0.
   */
  write(secrets: readonly SecretWrite[]): Promise<number>;
  /**
   * Writes a second Registry of the same Apps (`options` differing) into `namespace`, and returns
   * the cluster as a sidecar started with that `--registry-namespace` sees it (`withRegistry`).
   * Closing either closes the child.
   */
  withRegistry(namespace: string, options: RegistryOptions): Promise<WorldCluster>;
  /** The API server's user + system CPU so far, microseconds (10 ms resolution). */
  cpuMicros(): number;
  close(): Promise<void>;
}

/** Starts envtest in a child process seeded as `startCluster(apps, valueBytes, registry, keys)`. */
export async function startClusterProcess(
  apps: number,
  valueBytes: number,
  registry: RegistryOptions = {},
  keys: Readonly<Record<string, number>> = {},
): Promise<WorldCluster> {
  const setup: ClusterSetup = { apps, valueBytes, registry, keys };
  const child = await startCommandChild<ClusterCommands, ClusterReady>(
    "the data-plane API server",
    CHILD,
    [JSON.stringify(setup)],
    { execArgv: CHILD_FLAGS, timeoutMs: 600_000 },
  );
  const view = (registryNamespace: string): WorldCluster => ({
    kubeconfigPath: child.ready.kubeconfigPath,
    registryNamespace,
    apps,
    write: async (secrets) => localTime((await child.call("write", { secrets })).startedMs),
    withRegistry: async (namespace, options) => {
      await child.call("registry", { namespace, options });
      return view(namespace);
    },
    cpuMicros: () => cpuMicros(child.pid),
    close: child.close,
  });
  return view(child.ready.registryNamespace);
}

const CHILD = fileURLToPath(new URL("./cluster-child.ts", import.meta.url));
