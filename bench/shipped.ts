// The process users run, started the way the image starts it: the command, V8 flags and
// environment come from the Dockerfile's final stage, the flags from the sidecar's manifest. Only
// the listen and ops ports (free loopback ports), `--kubeconfig` and `--registry-namespace` are
// the bench's. Reusable by any suite (the fleet benchmark too): nothing here knows a suite.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { waitUntil } from "../test/support/wait.ts";
import { freePorts } from "./child.ts";
import { metric, waitForStatus } from "./http-probe.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";

export const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** How the image runs the sidecar: `node <nodeFlags> <entry> <args>` with `env` added. */
export interface ShippedCommand {
  /** V8 and Node flags between `node` and the entry (ENTRYPOINT and NODE_OPTIONS alike). */
  readonly nodeFlags: readonly string[];
  /** The bundle's entry, relative to the repository root (`dist/main.mjs`). */
  readonly entry: string;
  /** The container's `args` from the manifest (`serve` first). */
  readonly args: readonly string[];
  /** The final stage's ENV lines, NODE_OPTIONS left out. */
  readonly env: Readonly<Record<string, string>>;
}

/** Reads the final stage of the Dockerfile and the sidecar's `args` from its manifest. */
export function shippedCommand(root = ROOT): ShippedCommand {
  const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
  const stage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
  const entrypoint = JSON.parse(/^ENTRYPOINT (.+)$/m.exec(stage)![1]!) as string[];
  if (entrypoint[0] !== "node") throw new Error(`ENTRYPOINT does not start node: ${entrypoint}`);
  const env: Record<string, string> = {};
  for (const m of stage.matchAll(/^ENV (\w+)=(.*)$/gm)) env[m[1]!] = m[2]!.replace(/^"|"$/g, "");
  const nodeOptions = (env.NODE_OPTIONS ?? "").split(/\s+/).filter((f) => f !== "");
  delete env.NODE_OPTIONS;
  const patch = parse(
    readFileSync(join(root, "manifests/components/replica-mirror/sidecar.yaml"), "utf8"),
  ) as { spec: { template: { spec: { initContainers: { args: string[] }[] } } } };
  return {
    nodeFlags: [...entrypoint.slice(1, -1), ...nodeOptions],
    entry: entrypoint.at(-1)!,
    args: patch.spec.template.spec.initContainers[0]!.args,
    env,
  };
}

/** Builds dist/ with `npm run build` when it is missing or older than a source it is built from. */
export function ensureBuilt(root = ROOT): void {
  const entry = join(root, shippedCommand(root).entry);
  const builtAt = existsSync(entry) ? statSync(entry).mtimeMs : 0;
  const newest = Math.max(
    newestIn(join(root, "src")),
    statSync(join(root, "scripts/build.ts")).mtimeMs,
    statSync(join(root, "package-lock.json")).mtimeMs,
  );
  if (builtAt > newest) return;
  console.error("bench: dist/ is missing or stale, running npm run build");
  const r = spawnSync(process.execPath, [join(root, "scripts/build.ts")], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (r.status !== 0) throw new Error(`npm run build failed (${r.status})`);
}

function newestIn(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

/** What a bench changes about a shipped process, besides its ports and cluster. */
export interface ShippedOptions {
  readonly kubeconfig: string;
  readonly registryNamespace: string;
  /** Replaces the image's V8 flags; default: the image's own. */
  readonly nodeFlags?: readonly string[];
  /** Extra environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Another build's entry (an absolute path), for before/after comparisons; default: dist's. */
  readonly entry?: string;
  /** The image's environment variables left out (the devices suite). */
  readonly withoutEnv?: readonly string[];
  /** How the process is named in tables; default `replica-mirror`. */
  readonly name?: string;
  /** Flags after the image's own (`--state-file`, `--push-haproxy`, ...); default: none. */
  readonly extraArgs?: readonly string[];
  /**
   * `--serve-credentials true`: an App with a credential hands its Secret's value to the data
   * plane (ADR 53). Off by default, as in the manifest.
   */
  readonly serveCredentials?: boolean;
}

/**
 * `extraArgs`, and for a diagnostic run with BENCH_STATE_FILE=1 the flags of a state file of its
 * own (a new directory and key), when they name none: the manifest keeps one once its optional
 * key Secret exists, and the bench's sidecars otherwise run without.
 */
function withStateFile(extraArgs: readonly string[]): readonly string[] {
  if (process.env.BENCH_STATE_FILE !== "1" || extraArgs.some((a) => a.startsWith("--state-file")))
    return extraArgs;
  const dir = mkdtempSync(join(tmpdir(), "replica-mirror-bench-state-"));
  const key = join(dir, "key");
  writeFileSync(key, randomBytes(32), { mode: 0o600 });
  return [...extraArgs, `--state-file=${join(dir, "state")}`, `--state-key-file=${key}`];
}

/** The replica-mirror sidecar as the image runs it, on free loopback ports. */
export async function startShipped(o: ShippedOptions): Promise<ServerProcess> {
  const command = shippedCommand();
  const [dataPort, opsPort] = (await freePorts(2)) as [number, number];
  const own = new Set(["--listen", "--ops-listen", "--kubeconfig", "--registry-namespace"]);
  const args = command.args.filter((a) => !own.has(a.split("=")[0]!));
  const env: Record<string, string> = { ...command.env, ...o.env };
  for (const name of o.withoutEnv ?? []) delete env[name];
  return startServerProcess({
    name: o.name ?? "replica-mirror",
    args: [
      ...(o.nodeFlags ?? command.nodeFlags),
      o.entry ?? join(ROOT, command.entry),
      ...args,
      `--listen=127.0.0.1:${dataPort}`,
      `--ops-listen=127.0.0.1:${opsPort}`,
      `--kubeconfig=${o.kubeconfig}`,
      `--registry-namespace=${o.registryNamespace}`,
      // The manifest leaves the App Secret scope to an overlay; the bench's cluster is one.
      "--allow-cluster-wide-secrets=true",
      // The bench's upstreams listen on 127.0.0.1.
      "--allow-local-upstreams=true",
      // No data plane drains in front of it: a stop closes at once.
      "--shutdown-grace=0",
      ...(o.serveCredentials === true ? ["--serve-credentials=true"] : []),
      ...withStateFile(o.extraArgs ?? []),
    ],
    env,
    withoutEnv: o.withoutEnv ?? [],
    dataPort,
    opsPort,
  });
}

/** A shipped process that answered `/readyz` 200 and serves every App of the cluster. */
export interface SyncedShipped {
  readonly server: ServerProcess;
  /** From the spawn to the first `/readyz` 200, ms. */
  readonly readyMs: number;
}

/** Starts the shipped process and waits until it is ready and every App is ready in it. */
export async function startSynced(
  cluster: { kubeconfigPath: string; registryNamespace: string; apps: number },
  o: Omit<ShippedOptions, "kubeconfig" | "registryNamespace"> = {},
): Promise<SyncedShipped> {
  const server = await startShipped({
    ...o,
    kubeconfig: cluster.kubeconfigPath,
    registryNamespace: cluster.registryNamespace,
  });
  try {
    await waitForStatus(server.opsPort, "/readyz", 200, 120_000, 1);
    const readyMs = performance.now() - server.spawnedAt;
    await waitUntil(
      async () =>
        (await metric(server.opsPort, "replica_mirror_snapshot_ready_apps")) === cluster.apps,
      { timeoutMs: 60_000, intervalMs: 50, what: `${cluster.apps} ready Apps` },
    );
    return { server, readyMs };
  } catch (e) {
    await server.stop();
    throw new Error(`${String(e)}\n${server.output().slice(-2000)}`);
  }
}
