/**
 * One sidecar under chaos: the test kit's sidecar (assembled by `startSidecar` from `serve`
 * flags) with an observer that stamps what the sidecar reports with the model's state index. One
 * with a state file can be restarted on its ports, as a pod's container is: stopped (or crashed,
 * its files left as they were), then started again warm from its file.
 */
import { randomBytes } from "node:crypto";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Envtest } from "@replica-mirror/envtest";
import { pino } from "pino";
import { listArray } from "../../src/mirror/listed-index.ts";
import { openLastGoodState } from "../../src/sidecar/last-good-state.ts";
import { get } from "../support/http.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import type { SavedInputs } from "./restarts.ts";

const SILENT = pino({ level: "silent" });

/** CHAOS_TRACE=1 prints every reflector status and failed fetch of every sidecar. */
const TRACE = process.env.CHAOS_TRACE === "1";

export interface SidecarSpec {
  readonly name: string;
  /** `serve` flags besides --kubeconfig and the listeners. */
  readonly flags: readonly string[];
  readonly backoff: { readonly initialMs: number; readonly capMs: number };
  /** It keeps a state file (README, "The state file"), and can be restarted. */
  readonly stateFile?: boolean;
}

/** What a sidecar reported about itself, stamped with `clock()` (the model's state index). */
export interface SidecarEvents {
  /** The Registry reflector completed a list after its first one: it may have skipped states. */
  readonly registryRelists: number[];
  /** Newly referenced Secrets could not be fetched (served as unavailable until retried). */
  readonly fetchFailures: number[];
  /** Restarts, relists and backoffs by reflector and reason, for the run's summary. */
  readonly counts: Map<string, number>;
}

export interface ChaosSidecar {
  readonly name: string;
  /** The data listener's port on 127.0.0.1. */
  readonly port: number;
  /** The ops listener's port on 127.0.0.1: probes, metrics and the status API. */
  readonly opsPort: number;
  readonly events: SidecarEvents;
  /** Whether this sidecar's Secret watches cover a namespace. */
  visible(namespace: string): boolean;
  /** It runs with `--serve-credentials true`. */
  readonly serveCredentials: boolean;
  /** Counts its processes: a new one from the moment a restart begins. */
  readonly incarnation: number;
  /** From the moment a restart begins until the new process answers from its first Snapshot. */
  readonly restarting: boolean;
  /**
   * Stops it (as on SIGTERM, or `crash`: its files then left as they were before the stop), tells
   * `stopped` the Registry its state file holds (null: none usable), waits `downMs` and starts it
   * again on the same ports; resolves once it answers.
   */
  restart(
    downMs: number,
    crash: boolean,
    stopped: (saved: SavedInputs | null) => void,
  ): Promise<void>;
  stop(): Promise<void>;
}

/** Starts one sidecar against envtest. */
export async function startChaosSidecar(
  spec: SidecarSpec,
  envtest: Envtest,
  clock: () => number,
): Promise<ChaosSidecar> {
  const events: SidecarEvents = { registryRelists: [], fetchFailures: [], counts: new Map() };
  const count = (key: string) => events.counts.set(key, (events.counts.get(key) ?? 0) + 1);
  const listed = new Set<string>();
  const dir = spec.stateFile === true ? await mkdtemp(join(tmpdir(), "chaos-state-")) : null;
  const statePath = dir === null ? null : join(dir, "state");
  if (dir !== null) await writeFile(join(dir, "key"), randomBytes(32));
  const stateFlags =
    dir === null ? [] : ["--state-file", statePath!, "--state-key-file", join(dir, "key")];
  const start = (ports: string[]) =>
    startTestSidecar(envtest, {
      flags: [...spec.flags, ...stateFlags, ...ports],
      reflector: { backoff: spec.backoff, inactivityGraceMs: 500, relistSpreadMs: 500 },
      observer: {
        fetchFailed: (secrets, message) => {
          if (TRACE)
            console.log(`${Date.now() % 100000} ${spec.name} fetch-failed ${secrets} ${message}`);
          events.fetchFailures.push(clock());
          count("fetch-failed");
        },
        reflector: (name, status) => {
          if (TRACE)
            console.log(`${Date.now() % 100000} ${spec.name} ${name} ${JSON.stringify(status)}`);
          const who = name === "registry" ? "registry" : "secrets";
          // A list after a restart may have skipped values, as a relist may.
          if (status.kind === "listed") {
            if (listed.has(name) && who === "registry") events.registryRelists.push(clock());
            listed.add(name);
          }
          if (status.kind === "watch-restart" && status.reason !== "timeout")
            count(`${who}:${status.reason}`);
          if (status.kind === "relist") count(`${who}:relist-${status.reason}`);
          if (status.kind === "error" && status.phase === "list") count(`${who}:list-error`);
        },
      },
    });
  let sidecar: TestSidecar = await start([]);
  const [port, opsPort] = [sidecar.data.port, sidecar.ops.port];
  const namespaces = sidecar.config.secretNamespaces;
  let incarnation = 1;
  let restarting = false;
  return {
    name: spec.name,
    port,
    opsPort,
    events,
    visible: (namespace) => namespaces.length === 0 || namespaces.includes(namespace),
    serveCredentials: sidecar.config.serveCredentials,
    get incarnation() {
      return incarnation;
    },
    get restarting() {
      return restarting;
    },
    async restart(downMs, crash, stopped) {
      if (statePath === null) throw new Error(`sidecar ${spec.name} keeps no state file`);
      restarting = true;
      incarnation += 1;
      count(crash ? "replica:crash" : "replica:restart");
      const files = [statePath, `${statePath}.newest`];
      if (crash) for (const f of files) await copyFile(f, `${f}.crashed`).catch(() => undefined);
      await sidecar.stop();
      if (crash)
        for (const f of files)
          await copyFile(`${f}.crashed`, f).then(
            () => rm(`${f}.crashed`),
            () => rm(f, { force: true }),
          );
      const opened = await openLastGoodState(sidecar.config, SILENT, Date.now(), () => {});
      const saved = opened?.warm?.inputs;
      stopped(
        saved === undefined
          ? null
          : {
              registryRv: saved.registry.present ? saved.registry.resourceVersion : null,
              keptRegistry: saved.kept !== undefined,
              secrets: listArray(saved.secrets).map((x) => ({
                namespace: x.namespace,
                name: x.name,
                rv: x.resourceVersion,
              })),
            },
      );
      await sleep(downMs);
      const ports = ["--listen", `127.0.0.1:${port}`, "--ops-listen", `127.0.0.1:${opsPort}`];
      // The ports were just closed: binding them again may take a moment.
      sidecar = await waitUntil(() => start(ports), {
        timeoutMs: 2_000,
        intervalMs: 50,
        what: `sidecar ${spec.name} back on ports ${port} and ${opsPort}`,
      });
      await sidecar.serving(1);
      // How its start used the state file, for the run's summary: `loaded`, or `missing` when
      // none was written yet.
      const metrics = (await get(opsPort, "/metrics")).body;
      const loads = /^replica_mirror_state_loads_total\{outcome="([^"]+)"\} 1$/m.exec(metrics);
      count(`replica:${loads?.[1] ?? "unknown"}`);
      restarting = false;
    },
    async stop() {
      await sidecar.stop();
      if (dir !== null) await rm(dir, { recursive: true, force: true });
    },
  };
}
