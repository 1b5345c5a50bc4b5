/**
 * One sidecar under test, wired as `startSidecar` wires it (config from `parseServeConfig`, the
 * kubeconfig file, one ListWatch per scope, the Mirror, the data listener) but with the
 * reflector's backoff shortened: the production 0.8 s → 30 s would outlast a test's deadlines.
 */
import type { FastifyInstance } from "fastify";
import { parseServeConfig, type ServeConfig } from "../../src/cli/config.ts";
import { createDataServer } from "../../src/http/data-server.ts";
import { createListWatch } from "../../src/kube/client.ts";
import { createKubeTransport } from "../../src/kube/http-transport.ts";
import { loadKubeConfig } from "../../src/kube/kubeconfig.ts";
import type { SecretScope } from "../../src/mirror/fetch-secrets.ts";
import { Mirror } from "../../src/mirror/mirror.ts";
import { silentObserver } from "../../src/mirror/observer.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";

/** CHAOS_TRACE=1 prints every reflector status of every sidecar. */
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
  /** http://127.0.0.1:PORT of the data listener. */
  readonly url: string;
  readonly config: ServeConfig;
  readonly events: SidecarEvents;
  /** Whether this sidecar's Secret watches cover a namespace. */
  visible(namespace: string): boolean;
  stop(): Promise<void>;
}

/** Starts one sidecar against the API server the kubeconfig file names. */
export async function startChaosSidecar(
  spec: SidecarSpec,
  kubeconfigPath: string,
  clock: () => number,
): Promise<ChaosSidecar> {
  const parsed = parseServeConfig(
    [
      "--kubeconfig",
      kubeconfigPath,
      "--registry-namespace",
      "platform",
      "--listen",
      "127.0.0.1:0",
      "--ops-listen",
      "127.0.0.1:0",
      ...spec.flags,
    ],
    {},
  );
  if (!parsed.ok) throw new Error(parsed.error);
  const config = parsed.value;
  const loaded = loadKubeConfig(config.kubeconfig);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const transport = createKubeTransport(loaded.value.kubeConfig);
  if (!transport.ok) throw new Error(transport.error.message);
  const t = transport.value;
  const scopes: SecretScope[] =
    config.secretNamespaces.length === 0
      ? [{ namespace: null, listWatch: createListWatch(t, {}) }]
      : config.secretNamespaces.map((namespace) => ({
          namespace,
          listWatch: createListWatch(t, { namespace }),
        }));

  const events: SidecarEvents = { registryRelists: [], fetchFailures: [], counts: new Map() };
  const count = (key: string) => events.counts.set(key, (events.counts.get(key) ?? 0) + 1);
  const listed = new Set<string>();
  const holder = new SnapshotHolder();
  const mirror = new Mirror({
    registry: {
      listWatch: createListWatch(t, {
        namespace: config.registryNamespace,
        fieldSelector: `metadata.name=${config.registryName}`,
      }),
      namespace: config.registryNamespace,
      name: config.registryName,
      key: config.registryKey,
    },
    secrets: { scopes },
    holder,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    reflector: { backoff: spec.backoff, inactivityGraceMs: 500 },
    observer: {
      ...silentObserver,
      fetchFailed: () => {
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
  const data: FastifyInstance = createDataServer({ holder, logger: false });
  await data.listen({ host: config.listen.host, port: config.listen.port });
  const address = data.server.address();
  if (address === null || typeof address !== "object") throw new Error("no data address");
  mirror.start();
  const namespaces = config.secretNamespaces;
  return {
    name: spec.name,
    url: `http://127.0.0.1:${address.port}`,
    config,
    events,
    visible: (namespace) => namespaces.length === 0 || namespaces.includes(namespace),
    async stop() {
      data.server.closeAllConnections();
      await Promise.allSettled([data.close(), mirror.stop()]);
      t.close();
    },
  };
}
