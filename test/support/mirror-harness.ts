import { KubeConfig } from "@kubernetes/client-node";
import { type Envtest, type EnvtestOptions, startEnvtest } from "@replica-mirror/envtest";
import { createListWatch } from "../../src/kube/client.ts";
import { createKubeTransport, type KubeTransport } from "../../src/kube/http-transport.ts";
import { Mirror, type MirrorOptions } from "../../src/mirror/mirror.ts";
import type { MirrorObserver } from "../../src/mirror/observer.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { type AppInput, registryDoc } from "./registry.ts";

export const REGISTRY_NS = "platform";
export const REGISTRY_NAME = "replica-registry";

/** A mirror wired to an envtest server as `serve` wires it, with fast timings for tests. */
export interface MirrorUnderTest {
  readonly mirror: Mirror;
  readonly holder: SnapshotHolder;
  readonly transport: KubeTransport;
  stop(): Promise<void>;
}

export function transportFor(envtest: Envtest): KubeTransport {
  const kc = new KubeConfig();
  kc.loadFromString(envtest.kubeconfig());
  const t = createKubeTransport(kc);
  if (!t.ok) throw new Error(t.error.message);
  return t.value;
}

export function startMirror(
  envtest: Envtest,
  options: {
    namespaces?: string[];
    labelSelector?: string;
    observer?: MirrorObserver;
    watchTimeoutSeconds?: number;
    holder?: SnapshotHolder;
  } = {},
): MirrorUnderTest {
  const transport = transportFor(envtest);
  const holder = options.holder ?? new SnapshotHolder();
  const selector =
    options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector };
  const scopes =
    options.namespaces === undefined
      ? [{ namespace: null, listWatch: createListWatch(transport, selector) }]
      : options.namespaces.map((namespace) => ({
          namespace,
          listWatch: createListWatch(transport, { namespace, ...selector }),
        }));
  const mirrorOptions: MirrorOptions = {
    registry: {
      listWatch: createListWatch(transport, {
        namespace: REGISTRY_NS,
        fieldSelector: `metadata.name=${REGISTRY_NAME}`,
      }),
      namespace: REGISTRY_NS,
      name: REGISTRY_NAME,
      key: "registry.json",
    },
    secrets: { scopes, ...selector },
    holder,
    watchTimeoutSeconds: options.watchTimeoutSeconds ?? 2,
    // Fast retries so failure tests converge in test time; the policy shape is the production one.
    reflector: { backoff: { initialMs: 50, capMs: 400 }, inactivityGraceMs: 500 },
    ...(options.observer === undefined ? {} : { observer: options.observer }),
  };
  const mirror = new Mirror(mirrorOptions);
  mirror.start();
  return {
    mirror,
    holder,
    transport,
    async stop() {
      await mirror.stop();
      transport.close();
    },
  };
}

/** Writes the Registry Secret with these Apps (namespaces default to the Registry's). */
export function writeRegistry(envtest: Envtest, apps: AppInput[]): void {
  envtest.apply({
    namespace: REGISTRY_NS,
    name: REGISTRY_NAME,
    data: { "registry.json": JSON.stringify(registryDoc(apps)) },
  });
}

export function writeSecret(
  envtest: Envtest,
  namespace: string,
  name: string,
  data: Record<string, string>,
  labels?: Record<string, string>,
): void {
  envtest.apply({ namespace, name, data, ...(labels === undefined ? {} : { labels }) });
}

/** Polls until `check` returns a value that is not undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The readiness and decoded value of an App in the current Snapshot. */
export function appState(
  holder: SnapshotHolder,
  name: string,
): { ready: boolean; value: string | null; reason: string | null } | "absent" | "not-synced" {
  const s: Snapshot | null = holder.current();
  if (s === null) return "not-synced";
  const app = findApp(s, name);
  if (app === undefined) return "absent";
  return {
    ready: app.ready,
    value:
      app.secretValue === null ? null : Buffer.from(app.secretValue, "base64").toString("utf8"),
    reason: app.reason,
  };
}

export async function envtestFor(options: EnvtestOptions = {}): Promise<Envtest> {
  return startEnvtest({ bookmarkIntervalMs: 500, ...options });
}
