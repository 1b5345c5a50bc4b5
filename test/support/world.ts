// The world tests build: Registry documents, App Secrets, an envtest server holding them, and a
// kubeconfig file for a sidecar. One set of names for every suite.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type Envtest, type EnvtestOptions, startEnvtest } from "@replica-mirror/envtest";
import { parseRegistryDocument } from "../../src/registry/parse.ts";
import type { Registry } from "../../src/registry/schema.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { SecretData } from "../../src/snapshot/types.ts";

/** Where the tests' Registry Secret lives, and the key holding the document. */
export const REGISTRY_NS = "platform";
export const REGISTRY_NAME = "replica-registry";
export const REGISTRY_KEY = "registry.json";
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
}

/** A Registry document as the leader would write it. */
export function registryDoc(apps: readonly AppInput[]): {
  apiVersion: string;
  apps: unknown[];
} {
  return {
    apiVersion: "replica-mirror/v1",
    apps: apps.map((a) => ({
      name: a.name,
      hostnames: a.hostnames,
      secretRef: {
        ...(a.namespace === undefined ? {} : { namespace: a.namespace }),
        name: a.secret ?? `${a.name}-credentials`,
        key: a.key ?? "token",
      },
      ...(a.upstream === undefined ? {} : { upstream: a.upstream }),
    })),
  };
}

/** Parses a Registry from App inputs; throws when the document is invalid. */
export function registryOf(apps: readonly AppInput[], namespace = "apps"): Registry {
  const parsed = parseRegistryDocument(registryDoc(apps), namespace);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}

/** Writes the Registry Secret's value as given (JSON text, or raw bytes such as gzip). */
export function writeRegistryValue(envtest: Envtest, value: string | Uint8Array): string {
  return envtest.apply({
    namespace: REGISTRY_NS,
    name: REGISTRY_NAME,
    data: { [REGISTRY_KEY]: value },
  }).metadata.resourceVersion;
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

/** A Secret with UTF-8 values, base64-encoded as the API sends them. */
export function secretData(values: Record<string, string>, resourceVersion = "1"): SecretData {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) data[k] = Buffer.from(v).toString("base64");
  return { data, resourceVersion };
}

/** Build metadata for pure-core tests. */
export const meta = (revision = 1) => ({
  revision,
  builtAt: 1_700_000_000_000,
  registry: { present: true, resourceVersion: "1", error: null },
});

/** A SecretIndex from `namespace/name` keys. */
export function secretsOf(entries: Iterable<[string, SecretData]> = []): SecretIndex<SecretData> {
  const index = new SecretIndex<SecretData>();
  for (const [key, value] of entries) {
    const [namespace, name] = key.split("/") as [string, string];
    index.set(namespace, name, value);
  }
  return index;
}
