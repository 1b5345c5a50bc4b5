import { parseRegistryDocument } from "../../src/registry/parse.ts";
import type { Registry } from "../../src/registry/schema.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { SecretData } from "../../src/snapshot/types.ts";

export interface AppInput {
  name: string;
  hostnames: string[];
  secret?: string;
  key?: string;
  namespace?: string;
  upstream?: string;
}

/** A Registry document as the leader would write it. */
export function registryDoc(apps: AppInput[]): unknown {
  return {
    apiVersion: "replica-mirror/v1",
    apps: apps.map((a) => ({
      name: a.name,
      hostnames: a.hostnames,
      secretRef: {
        namespace: a.namespace,
        name: a.secret ?? `${a.name}-credentials`,
        key: a.key ?? "token",
      },
      ...(a.upstream === undefined ? {} : { upstream: a.upstream }),
    })),
  };
}

/** Parses a Registry from App inputs; fails the test when the document is invalid. */
export function registryOf(apps: AppInput[], namespace = "apps"): Registry {
  const parsed = parseRegistryDocument(registryDoc(apps), namespace);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}

/** A Secret with UTF-8 values, base64-encoded as the API sends them. */
export function secretData(values: Record<string, string>, resourceVersion = "1"): SecretData {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) data[k] = Buffer.from(v).toString("base64");
  return { data, resourceVersion };
}

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
