// The fleet: N processes of the production artifact (`node dist/main.mjs serve`), each with the
// arguments the shipped manifest gives the sidecar container, its listeners on free ports, and its
// own kubeconfig, so that the API server's accounting tells the replicas apart.

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { kubeconfigYaml } from "@replica-mirror/envtest";
import { parse } from "yaml";
import { z } from "zod";
import { type Command, listeningPorts, startCommand } from "../../test/support/process.ts";
import { REGISTRY_NS } from "../../test/support/world.ts";
import { shippedCommand } from "../shipped.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The CLI a replica runs: the production artifact, or the source it is built from. */
const ENTRY = { dist: join(ROOT, "dist/main.mjs"), src: join(ROOT, "src/cli/main.ts") } as const;
const MANIFEST = join(ROOT, "manifests/components/replica-mirror/sidecar.yaml");

/** One running replica. */
export interface Replica {
  readonly index: number;
  /** Its name in the API server's accounting. */
  readonly client: string;
  readonly command: Command;
  readonly pid: number;
  readonly dataPort: number;
  /** Probes, metrics and the status API. */
  readonly opsPort: number;
  /** Milliseconds since the epoch just before the spawn. */
  readonly spawnedAt: number;
}

/** How every replica of a fleet is started. */
export interface FleetSpec {
  readonly apiUrl: string;
  /** Added to the manifest's arguments (`--secret-selector=...`). */
  readonly extraArgs: readonly string[];
  /** Client names are `${prefix}-NN`. */
  readonly prefix: string;
  /** How long one replica may take to log where it listens. */
  readonly startTimeoutMs: number;
  /** Which CLI each replica runs (see ENTRY). */
  readonly artifact: keyof typeof ENTRY;
  /** A built entry (an absolute path) run in place of the artifact's. */
  readonly entry?: string | undefined;
  /** Node options before the artifact (`--expose-gc`, `--import` a probe), and an IPC channel. */
  readonly nodeArgs?: readonly string[];
  readonly ipc?: boolean;
}

const manifestPatch = z.object({
  spec: z.object({
    template: z.object({
      spec: z.object({
        initContainers: z.array(z.object({ name: z.string(), args: z.array(z.string()) })),
      }),
    }),
  }),
});

/**
 * The sidecar container's arguments in the shipped manifest, listeners moved to free loopback
 * ports (port 0), plus the Registry's namespace a pod would have.
 */
export async function manifestArgs(): Promise<string[]> {
  const patch = manifestPatch.parse(parse(await readFile(MANIFEST, "utf8")));
  const container = patch.spec.template.spec.initContainers.find(
    (c) => c.name === "replica-mirror",
  );
  if (container === undefined) throw new Error(`${MANIFEST}: no replica-mirror container`);
  const args = container.args.map((a) =>
    a.startsWith("--listen=") || a.startsWith("--ops-listen=")
      ? `${a.slice(0, a.indexOf("="))}=127.0.0.1:0`
      : a,
  );
  return [
    ...args,
    `--registry-namespace=${REGISTRY_NS}`,
    // The manifest leaves the App Secret scope to an overlay; the fleet's cluster is one.
    "--allow-cluster-wide-secrets=true",
    // No data plane drains in front of a replica here: a stop closes at once.
    "--shutdown-grace=0",
  ];
}

/** Fleets not closed yet: their processes are killed if the harness exits without closing them. */
const live = new Set<Fleet>();
process.once("exit", () => {
  for (const f of live) for (const r of f.replicas()) r.command.child.kill("SIGKILL");
});

/** Replicas started from one spec; a slot can be restarted, keeping its client name. */
export class Fleet {
  readonly spec: FleetSpec;
  readonly #dir: string;
  readonly #args: readonly string[];
  readonly #slots: (Replica | undefined)[];

  private constructor(spec: FleetSpec, dir: string, args: readonly string[], size: number) {
    this.spec = spec;
    this.#dir = dir;
    this.#args = args;
    this.#slots = Array.from({ length: size }, () => undefined);
  }

  /** A fleet of `size` slots, none started yet; their kubeconfigs are written. */
  static async create(spec: FleetSpec, size: number): Promise<Fleet> {
    const dir = await mkdtemp(join(tmpdir(), "replica-mirror-fleet-"));
    const fleet = new Fleet(spec, dir, [...(await manifestArgs()), ...spec.extraArgs], size);
    live.add(fleet);
    for (let i = 0; i < size; i++) {
      await writeFile(
        fleet.#kubeconfig(i),
        kubeconfigYaml(spec.apiUrl, { client: fleet.client(i) }),
        {
          mode: 0o600,
        },
      );
    }
    return fleet;
  }

  get size(): number {
    return this.#slots.length;
  }

  /** The client name of slot `i`. */
  client(i: number): string {
    return `${this.spec.prefix}-${String(i).padStart(2, "0")}`;
  }

  /** The running replicas, by slot. */
  replicas(): Replica[] {
    return this.#slots.filter((r): r is Replica => r !== undefined);
  }

  /**
   * Starts the given slots at once; resolves when each logged where it listens. `onSpawn` is told
   * each process id as soon as it exists.
   */
  async start(indices: readonly number[], onSpawn?: (pid: number) => void): Promise<Replica[]> {
    // The image's V8 flags and environment (bench/shipped.ts), as every replica of a real fleet.
    const shipped = shippedCommand();
    const env: Record<string, string> = { ...shipped.env };
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && !k.startsWith("REPLICA_MIRROR_")) env[k] = v;
    const spawned = indices.map((index) => {
      const node = this.spec.nodeArgs ?? [];
      const args = [
        ...shipped.nodeFlags,
        ...node,
        this.spec.entry ?? ENTRY[this.spec.artifact],
        ...this.#args,
        `--kubeconfig=${this.#kubeconfig(index)}`,
      ];
      const spawnedAt = Date.now();
      const command = startCommand(process.execPath, args, { env, ipc: this.spec.ipc === true });
      onSpawn?.(command.child.pid ?? -1);
      return { index, spawnedAt, command };
    });
    const started = await Promise.all(
      spawned.map(async ({ index, spawnedAt, command }) => {
        const ports = await listeningPorts(command, this.spec.startTimeoutMs);
        const replica: Replica = {
          index,
          client: this.client(index),
          command,
          pid: command.child.pid ?? -1,
          dataPort: ports.data,
          opsPort: ports.ops,
          spawnedAt,
        };
        this.#slots[index] = replica;
        return replica;
      }),
    );
    return started;
  }

  /** Stops the given slots (SIGTERM, SIGKILL after 10 s) and waits for them to be gone. */
  async stop(indices: readonly number[]): Promise<void> {
    await Promise.all(
      indices.map(async (i) => {
        const r = this.#slots[i];
        this.#slots[i] = undefined;
        if (r === undefined || r.command.exited() !== null) return;
        r.command.child.kill("SIGTERM");
        const t = setTimeout(() => r.command.child.kill("SIGKILL"), 10_000);
        await r.command.exit;
        clearTimeout(t);
      }),
    );
  }

  /** Stops every replica and removes the kubeconfigs. */
  async close(): Promise<void> {
    await this.stop(this.#slots.map((_, i) => i));
    live.delete(this);
    await rm(this.#dir, { recursive: true, force: true });
  }

  #kubeconfig(i: number): string {
    return join(this.#dir, `${this.client(i)}.yaml`);
  }
}
