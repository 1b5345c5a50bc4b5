import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { freePort } from "./child.ts";
import { registryBytes } from "./fixtures.ts";

export const REGISTRY_NAMESPACE = "platform";
export const REGISTRY_NAME = "replica-registry";
export const NOISE_NAMESPACE = "noise";

/** An envtest in this process, its kubeconfig on disk for sidecars in other processes. */
export interface BenchCluster {
  readonly envtest: Envtest;
  readonly kubeconfigPath: string;
  close(): Promise<void>;
}

export async function startCluster(): Promise<BenchCluster> {
  // A larger history than the default so a watch that reconnects during a 50k-write burst resumes.
  const envtest = await startEnvtest({ historySize: 100_000 });
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-bench-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  await envtest.writeKubeconfig(kubeconfigPath);
  return { envtest, kubeconfigPath, close: () => envtest.close() };
}

/** The Secret of App `i` in `registryDocument(n)`. */
export const appSecret = (i: number) => ({
  namespace: `tenant-${i % 50}`,
  name: `app-${i}-credentials`,
});

/** A distinct value of about `bytes` bytes for App `i`. */
export const appValue = (i: number, bytes: number, tag = "") => `${tag}${i}:`.padEnd(bytes, "k");

/**
 * Writes the Registry (gzip above 5k Apps: a Secret holds at most 1 MiB) and every App's Secret
 * with a non-empty `token`, so every App starts ready.
 */
export async function seedApps(envtest: Envtest, n: number, valueBytes = 32): Promise<void> {
  envtest.apply({
    namespace: REGISTRY_NAMESPACE,
    name: REGISTRY_NAME,
    data: { "registry.json": registryBytes(n, n > 5_000) },
  });
  for (let i = 0; i < n; i++) {
    envtest.apply({ ...appSecret(i), data: { token: appValue(i, valueBytes) } });
    if (i % 1000 === 999) await yieldToLoop();
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

/** A `replica-mirror serve` process (the real CLI) against a cluster. */
export interface SidecarProcess {
  readonly proc: ChildProcess;
  readonly dataPort: number;
  readonly opsPort: number;
  /** `performance.now()` just before the spawn. */
  readonly spawnedAt: number;
  stop(): Promise<void>;
}

export async function spawnSidecar(kubeconfigPath: string): Promise<SidecarProcess> {
  const [dataPort, opsPort] = [await freePort(), await freePort()];
  const cli = new URL("../src/cli/main.ts", import.meta.url).pathname;
  const spawnedAt = performance.now();
  const proc = spawn(
    process.execPath,
    [
      cli,
      "serve",
      "--kubeconfig",
      kubeconfigPath,
      "--registry-namespace",
      REGISTRY_NAMESPACE,
      "--listen",
      `127.0.0.1:${dataPort}`,
      "--ops-listen",
      `127.0.0.1:${opsPort}`,
      "--log-level",
      "warn",
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const killOnExit = () => proc.kill("SIGKILL");
  process.once("exit", killOnExit);
  return {
    proc,
    dataPort,
    opsPort,
    spawnedAt,
    async stop() {
      process.off("exit", killOnExit);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const gone = new Promise<void>((r) => proc.once("exit", () => r()));
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 2_000);
      await gone;
      clearTimeout(t);
    },
  };
}
