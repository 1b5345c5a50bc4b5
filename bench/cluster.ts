import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import {
  kubeconfigFor,
  REGISTRY_KEY,
  REGISTRY_NAME,
  REGISTRY_NS,
  writeRegistryValue,
} from "../test/support/world.ts";
import { type RegistryOptions, registryBytes } from "./fixtures.ts";

export const NOISE_NAMESPACE = "noise";

/** What a sidecar started against a cluster needs of it. */
export interface ClusterAddress {
  /** Its kubeconfig on disk, for sidecars in other processes. */
  readonly kubeconfigPath: string;
  /** Where the Registry Secret is (the sidecar's `--registry-namespace`). */
  readonly registryNamespace: string;
  readonly apps: number;
}

/** An envtest in this process. */
export interface BenchCluster extends ClusterAddress {
  readonly envtest: Envtest;
  close(): Promise<void>;
}

/**
 * An envtest holding a Registry of `apps` Apps (gzip) and every App's Secret with a distinct
 * non-empty `token` of `valueBytes`, so every App starts ready; `registry.upstream` points every
 * App at one upstream. `keys` adds keys to every App Secret, each with a distinct value of the
 * bytes given (for a second Registry reading another key, `withRegistry`).
 */
export async function startCluster(
  apps: number,
  valueBytes = 1024,
  registry: RegistryOptions = {},
  keys: Readonly<Record<string, number>> = {},
): Promise<BenchCluster> {
  // A larger history than the default so a watch that reconnects during a burst resumes.
  const envtest = await startEnvtest({ historySize: 100_000 });
  const kubeconfig = await kubeconfigFor(envtest);
  await seedApps(envtest, apps, valueBytes, registry, keys);
  await warmListEncodings(envtest);
  return {
    envtest,
    kubeconfigPath: kubeconfig.path,
    registryNamespace: REGISTRY_NS,
    apps,
    async close() {
      await envtest.close();
      await kubeconfig.remove();
    },
  };
}

/**
 * Writes a second Registry of the same Apps and Secrets into `namespace` (`options` differing:
 * with a credential, say), and returns `cluster` as a sidecar started with that
 * `--registry-namespace` sees it: one envtest, one set of App Secrets, two Registries, so that
 * sidecars of both kinds run side by side. Closing the result closes `cluster`.
 */
export function withRegistry(
  cluster: BenchCluster,
  namespace: string,
  options: RegistryOptions,
): BenchCluster {
  cluster.envtest.apply({
    namespace,
    name: REGISTRY_NAME,
    data: { [REGISTRY_KEY]: registryBytes(cluster.apps, true, options) },
  });
  return { ...cluster, registryNamespace: namespace };
}

const shared = new Map<string, Promise<BenchCluster>>();

/**
 * A cluster of `startCluster(apps)` shared by the suites of one run that only read it (start-up,
 * memory, V8 flags): seeding 100k Secrets takes a while. `closeSharedClusters` ends them.
 */
export function sharedCluster(apps: number, valueBytes = 1024): Promise<BenchCluster> {
  const key = `${apps}/${valueBytes}`;
  let c = shared.get(key);
  if (c === undefined) {
    c = startCluster(apps, valueBytes);
    shared.set(key, c);
  }
  return c;
}

/** Closes the shared cluster of `startCluster(apps, valueBytes)`, if there is one. */
export async function closeSharedCluster(apps: number, valueBytes = 1024): Promise<void> {
  const key = `${apps}/${valueBytes}`;
  const c = shared.get(key);
  if (c === undefined) return;
  shared.delete(key);
  await (await c).close();
}

/** Closes every shared cluster. */
export async function closeSharedClusters(): Promise<void> {
  for (const c of shared.values()) await (await c).close();
  shared.clear();
}

/** The Secret of App `i` in `registryDocument(n)`. */
export const appSecret = (i: number) => ({
  namespace: `tenant-${i % 50}`,
  name: `app-${i}-credentials`,
});

/** A distinct value of about `bytes` bytes for App `i`. */
export const appValue = (i: number, bytes: number, tag = "") => `${tag}${i}:`.padEnd(bytes, "k");

async function seedApps(
  envtest: Envtest,
  n: number,
  valueBytes: number,
  registry: RegistryOptions,
  keys: Readonly<Record<string, number>>,
): Promise<void> {
  writeRegistryValue(envtest, registryBytes(n, true, registry));
  const extra = Object.entries(keys);
  for (let i = 0; i < n; i++) {
    const data: Record<string, string> = { token: appValue(i, valueBytes) };
    for (const [key, bytes] of extra) data[key] = appValue(i, bytes, key);
    envtest.apply({ ...appSecret(i), data });
    if (i % 1000 === 999) await yieldToLoop();
  }
}

/**
 * Lists every Secret once in protobuf and in JSON, and as a streaming list (the sidecar's default,
 * ADR 57), and forgets the requests: envtest encodes a stored Secret the first time a list asks
 * for it (the first protobuf list of 10k Secrets took it about 600 ms more; the first streaming
 * list of 100k, 2.5 s before its first byte), which no suite should count as the sidecar's start.
 */
async function warmListEncodings(envtest: Envtest): Promise<void> {
  for (const accept of ["application/vnd.kubernetes.protobuf", "application/json"]) {
    const res = await fetch(`${envtest.url}/api/v1/secrets?resourceVersion=0`, {
      headers: { accept },
    });
    await res.arrayBuffer();
  }
  // The sidecar streams in protobuf (ADR 65); JSON is what a server without it would answer.
  for (const accept of ["application/vnd.kubernetes.protobuf", "application/json"])
    await streamingListOnce(envtest, accept);
  envtest.requests.clear();
}

/** Reads a streaming list of every Secret up to the bookmark that ends its initial events. */
async function streamingListOnce(envtest: Envtest, accept: string): Promise<void> {
  const query =
    "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
  const stop = new AbortController();
  const res = await fetch(`${envtest.url}/api/v1/secrets?${query}`, {
    headers: { accept },
    signal: stop.signal,
  });
  if (res.body === null) throw new Error("a streaming list without a body");
  const end = Buffer.from("k8s.io/initial-events-end");
  let tail = Buffer.alloc(0);
  try {
    for await (const chunk of res.body) {
      // The marker may straddle two chunks: keep the end of the one before.
      const seen = Buffer.concat([tail, chunk]);
      if (seen.includes(end)) break;
      tail = seen.subarray(Math.max(0, seen.length - end.length));
    }
  } finally {
    stop.abort();
  }
}

/** Writes `count` Secrets no App references, `bytes` each, yielding so watch streams keep up. */
export async function writeUnrelated(
  envtest: Envtest,
  count: number,
  bytes: number,
  tag = "v1",
): Promise<void> {
  for (let i = 0; i < count; i++) {
    envtest.apply({
      namespace: NOISE_NAMESPACE,
      name: `unrelated-${i}`,
      data: { blob: appValue(i, bytes, tag) },
    });
    if (i % 200 === 199) await yieldToLoop();
  }
}

export const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));
