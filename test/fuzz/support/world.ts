// The data the fuzz and hygiene tests serve: a Registry in `platform` and App Secrets in
// `tenant-a`, written to an envtest server, plus a kubeconfig file for a sidecar to use.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Envtest } from "@replica-mirror/envtest";
import { SECRET_VALUES, WORLD_APPS, type WorldApp } from "./http-fuzz.ts";

export const REGISTRY_NS = "platform";
export const REGISTRY_NAME = "replica-registry";
export const APP_NS = "tenant-a";

/** The Registry document for these Apps (App Secrets in APP_NS). */
export function registryDocument(apps: readonly WorldApp[]): object {
  return {
    apiVersion: "replica-mirror/v1",
    apps: apps.map((a) => ({
      name: a.name,
      hostnames: a.hostnames,
      secretRef: { namespace: APP_NS, name: a.secret, key: "token" },
      ...(a.upstream === undefined ? {} : { upstream: a.upstream }),
    })),
  };
}

/** Writes the Registry value as given (JSON text, or raw bytes such as gzip). */
export function writeRegistryValue(envtest: Envtest, value: string | Uint8Array): string {
  return envtest.apply({
    namespace: REGISTRY_NS,
    name: REGISTRY_NAME,
    data: { "registry.json": value },
  }).metadata.resourceVersion;
}

/** Writes the Registry for these Apps, as JSON or gzip-compressed JSON; returns its resourceVersion. */
export function writeRegistry(envtest: Envtest, apps: readonly WorldApp[], gzip = false): string {
  const json = JSON.stringify(registryDocument(apps));
  return writeRegistryValue(envtest, gzip ? gzipSync(json) : json);
}

/** The fuzz world: every App of WORLD_APPS, with the Secrets of the ready ones. */
export function seedWorld(envtest: Envtest): void {
  for (const a of WORLD_APPS) {
    if (!a.ready) continue;
    const value = SECRET_VALUES[a.name as keyof typeof SECRET_VALUES];
    envtest.apply({ namespace: APP_NS, name: a.secret, data: { token: value } });
  }
  writeRegistry(envtest, WORLD_APPS);
}

/** A temporary directory holding the envtest kubeconfig; `remove` deletes it. */
export async function kubeconfigFor(
  envtest: Envtest,
): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-fuzz-"));
  const path = join(dir, "kubeconfig.yaml");
  await envtest.writeKubeconfig(path);
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}
