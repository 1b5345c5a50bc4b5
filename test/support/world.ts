// The world tests build: Registry documents, App Secrets, an envtest server holding them, a
// kubeconfig file for a sidecar, and Snapshots for the pure core. One set of names for every suite.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type Envtest, type EnvtestOptions, startEnvtest } from "@replica-mirror/envtest";
import type { ListWatch } from "../../src/kube/cache/list-watch.ts";
import { loadKubeConfig } from "../../src/kube/rest/kubeconfig.ts";
import { createKubeTransport, type KubeTransport } from "../../src/kube/rest/transport.ts";
import type { RegistrySource } from "../../src/mirror/mirror-options.ts";
import { parseRegistryDocument } from "../../src/registry/parse.ts";
import type { Registry } from "../../src/registry/schema.ts";
import { build } from "../../src/snapshot/build.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { RegistryStatus, SecretData, Snapshot } from "../../src/snapshot/types.ts";

/** Where the tests' Registry Secret lives, and the key holding the document. */
export const REGISTRY_NS = "platform";
export const REGISTRY_NAME = "replica-registry";
export const REGISTRY_KEY = "registry.json";
/** The one document version the sidecar reads. */
export const REGISTRY_API_VERSION = "replica-mirror/v1";
/** The namespace of App Secrets when a test does not say. */
export const APP_NS = "tenant-a";

/** One App as a test declares it; the Secret defaults to `<name>-credentials`, key `token`. */
export interface AppInput {
  readonly name: string;
  readonly hostnames: readonly string[];
  readonly secret?: string;
  readonly key?: string;
  /** Omitted: the Registry's namespace (the document leaves it out). */
  readonly namespace?: string;
  readonly upstream?: string;
  /** The App's `credential` as the document writes it (`{}`: no prefix). */
  readonly credential?: { readonly prefix?: string };
  /** The App's `tls` Secret, by name (in `namespace`) or whole. */
  readonly tls?: string | { readonly namespace?: string; readonly name: string };
  /** Fields written after the declared ones, which the sidecar must ignore. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** A Registry document as the leader would write it; `extra` adds top-level fields. */
export function registryDoc(
  apps: readonly AppInput[],
  extra: Readonly<Record<string, unknown>> = {},
): { apiVersion: string; apps: Record<string, unknown>[] } {
  return {
    apiVersion: REGISTRY_API_VERSION,
    apps: apps.map((a) => ({
      name: a.name,
      hostnames: a.hostnames,
      secretRef: {
        ...(a.namespace === undefined ? {} : { namespace: a.namespace }),
        name: a.secret ?? `${a.name}-credentials`,
        key: a.key ?? "token",
      },
      ...(a.upstream === undefined ? {} : { upstream: a.upstream }),
      ...(a.credential === undefined ? {} : { credential: a.credential }),
      ...(a.tls === undefined ? {} : { tls: { secretRef: tlsRefOf(a) } }),
      ...a.extra,
    })),
    ...extra,
  };
}

function tlsRefOf(a: AppInput): { namespace?: string; name: string } {
  if (typeof a.tls !== "string") return { ...a.tls! };
  return a.namespace === undefined ? { name: a.tls } : { namespace: a.namespace, name: a.tls };
}

/** The test Registry Secret as a Mirror watches it, through `listWatch`. */
export const registrySource = (
  listWatch: ListWatch,
  rules: Pick<RegistrySource, "allowLocalUpstreams"> = {},
): RegistrySource => ({
  listWatch,
  namespace: REGISTRY_NS,
  name: REGISTRY_NAME,
  key: REGISTRY_KEY,
  ...rules,
});

/**
 * Parses a Registry from App inputs; throws when the document is invalid. Local upstreams are
 * allowed: the tests' upstreams listen on 127.0.0.1.
 */
export function registryOf(apps: readonly AppInput[], namespace = "apps"): Registry {
  const parsed = parseRegistryDocument(registryDoc(apps), {
    defaultNamespace: namespace,
    allowLocalUpstreams: true,
  });
  if (!parsed.ok) throw new Error(parsed.error.message);
  if (parsed.value.refused.length > 0) throw new Error(parsed.value.refused[0]!.reason);
  return parsed.value.registry;
}

/** Writes the Registry Secret with exactly this data (keys besides REGISTRY_KEY, or without it). */
export function writeRegistryData(
  envtest: Envtest,
  data: Readonly<Record<string, string | Uint8Array>>,
): string {
  return envtest.apply({ namespace: REGISTRY_NS, name: REGISTRY_NAME, data: { ...data } }).metadata
    .resourceVersion;
}

/** Writes the Registry Secret's value as given (JSON text, or raw bytes such as gzip). */
export function writeRegistryValue(envtest: Envtest, value: string | Uint8Array): string {
  return writeRegistryData(envtest, { [REGISTRY_KEY]: value });
}

/** Deletes the Registry Secret; false when there was none. */
export function deleteRegistry(envtest: Envtest): boolean {
  return envtest.delete(REGISTRY_NS, REGISTRY_NAME);
}

/** Writes the Registry Secret for these Apps, as JSON or gzip; returns its resourceVersion. */
export function writeRegistry(
  envtest: Envtest,
  apps: readonly AppInput[],
  options: { gzip?: boolean } = {},
): string {
  const json = JSON.stringify(registryDoc(apps));
  return writeRegistryValue(envtest, options.gzip === true ? gzipSync(json) : json);
}

/** Writes one Secret; returns its resourceVersion. */
export function writeSecret(
  envtest: Envtest,
  namespace: string,
  name: string,
  data: Record<string, string>,
  labels?: Record<string, string>,
): string {
  return envtest.apply({ namespace, name, data, ...(labels === undefined ? {} : { labels }) })
    .metadata.resourceVersion;
}

/** An envtest server with a short bookmark interval, as the mirror tests want it. */
export function envtestFor(options: EnvtestOptions = {}): Promise<Envtest> {
  return startEnvtest({ bookmarkIntervalMs: 500, ...options });
}

/** A temporary directory holding the envtest kubeconfig; `remove` deletes it. */
export async function kubeconfigFor(
  envtest: Envtest,
): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-test-"));
  const path = join(dir, "kubeconfig.yaml");
  await envtest.writeKubeconfig(path);
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A KubeTransport to envtest made as the sidecar makes one, from a kubeconfig file; `close`
 * closes the transport and removes the file.
 */
export async function transportFor(
  envtest: Envtest,
): Promise<{ transport: KubeTransport; close: () => Promise<void> }> {
  const kubeconfig = await kubeconfigFor(envtest);
  const loaded = loadKubeConfig(kubeconfig.path);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const created = createKubeTransport(loaded.value.kubeConfig);
  if (!created.ok) throw new Error(created.error.message);
  const transport = created.value;
  return {
    transport,
    close: async () => {
      transport.close();
      await kubeconfig.remove();
    },
  };
}

/** A Secret as the store keeps it: UTF-8 values as byte strings (ADR 20). */
export function secretData(values: Record<string, string>, resourceVersion = "1"): SecretData {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) data[k] = Buffer.from(v).toString("latin1");
  return { data, resourceVersion };
}

/** When every pure-core test's Snapshot was built. */
export const BUILT_AT = 1_700_000_000_000;

/** A present Registry at `resourceVersion`, served whole, or refused with `error`. */
export const registryStatus = (
  resourceVersion = "1",
  error: string | null = null,
): RegistryStatus => ({
  present: true,
  resourceVersion,
  error,
  refusedApps: [],
  contentHash: null,
});

/** Build metadata for pure-core tests. */
export const meta = (revision = 1, builtAt = BUILT_AT) => ({
  revision,
  builtAt,
  registry: registryStatus(),
});

/** Apps in namespace `apps`; `secrets` maps a Secret name to its values. */
export function snapshotOf(
  apps: AppInput[] | null,
  secrets: Record<string, Record<string, string>> = {},
  revision = 1,
  registry: RegistryStatus = registryStatus("7"),
): Snapshot {
  return build(
    apps === null ? null : registryOf(apps),
    secretsOf(
      Object.entries(secrets).map(([name, values]) => [`apps/${name}`, secretData(values)]),
    ),
    { revision, builtAt: BUILT_AT, registry },
  );
}

/** The App most suites serve: ready once `shop-credentials` has a token. */
/**
 * An App whose credential is declared, as a mirror serving credentials keeps its value (ADR 68)
 * for a test to follow; its Secret is `<name>-credentials` in `namespace`.
 */
export const credentialApp = (
  name: string,
  namespace: string,
  hostnames = [`${name}.example.com`],
): AppInput => ({ name, hostnames, namespace, credential: {} });

export const SHOP: AppInput = {
  name: "shop",
  hostnames: ["shop.example.com", "*.shop.example.com"],
  upstream: "http://shop:8080",
};

/** SHOP as a Registry in namespace `apps` declares it (a Snapshot's App and an App record). */
export const SHOP_DECLARED = {
  name: "shop",
  hostnames: ["shop.example.com", "*.shop.example.com"],
  secretRef: { namespace: "apps", name: "shop-credentials", key: "token" },
  upstream: "http://shop:8080",
  credential: null,
  tls: null,
} as const;

/** A SecretIndex from `namespace/name` keys. */
export function secretsOf(entries: Iterable<[string, SecretData]> = []): SecretIndex<SecretData> {
  const index = new SecretIndex<SecretData>();
  for (const [key, value] of entries) {
    const [namespace, name] = key.split("/") as [string, string];
    index.set(namespace, name, value);
  }
  return index;
}
