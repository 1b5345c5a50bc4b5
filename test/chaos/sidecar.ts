/**
 * One sidecar under chaos: the test kit's sidecar (assembled by `startSidecar` from `serve`
 * flags) with an observer that stamps what the sidecar reports with the model's state index.
 */
import type { Envtest } from "@replica-mirror/envtest";
import { startTestSidecar } from "../support/sidecar.ts";

/** CHAOS_TRACE=1 prints every reflector status and failed fetch of every sidecar. */
const TRACE = process.env.CHAOS_TRACE === "1";

export interface SidecarSpec {
  readonly name: string;
  /** `serve` flags besides --kubeconfig and the listeners. */
  readonly flags: readonly string[];
  readonly backoff: { readonly initialMs: number; readonly capMs: number };
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
  const sidecar = await startTestSidecar(envtest, {
    flags: spec.flags,
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
  const namespaces = sidecar.config.secretNamespaces;
  return {
    name: spec.name,
    port: sidecar.data.port,
    opsPort: sidecar.ops.port,
    events,
    visible: (namespace) => namespaces.length === 0 || namespaces.includes(namespace),
    serveCredentials: sidecar.config.serveCredentials,
    stop: () => sidecar.stop(),
  };
}
