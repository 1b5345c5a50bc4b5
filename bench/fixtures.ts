import { gzipSync } from "node:zlib";
import { SecretIndex } from "../src/snapshot/secret-index.ts";
import type { SecretData } from "../src/snapshot/types.ts";

/** A Registry document with `n` Apps: an exact hostname each, and a wildcard on every tenth. */
export function registryDocument(n: number): { apiVersion: string; apps: unknown[] } {
  const apps = [];
  for (let i = 0; i < n; i++) {
    const name = `app-${i}`;
    const hostnames = [`${name}.example.com`];
    if (i % 10 === 0) hostnames.push(`*.${name}.example.com`);
    apps.push({
      name,
      hostnames,
      secretRef: { namespace: `tenant-${i % 50}`, name: `${name}-credentials`, key: "token" },
      upstream: `http://${name}.tenant-${i % 50}.svc.cluster.local:8080`,
    });
  }
  return { apiVersion: "replica-mirror/v1", apps };
}

export function registryBytes(n: number, gzip: boolean): Buffer {
  const json = Buffer.from(JSON.stringify(registryDocument(n)));
  return gzip ? gzipSync(json, { level: 9 }) : json;
}

/** Secrets for the Apps of `registryDocument(n)`, each with a `valueBytes`-long token. */
export function secretsFor(n: number, valueBytes = 32): SecretIndex<SecretData> {
  const m = new SecretIndex<SecretData>();
  for (let i = 0; i < n; i++) {
    const value = Buffer.alloc(valueBytes, i % 256).toString("base64");
    m.set(`tenant-${i % 50}`, `app-${i}-credentials`, {
      data: { token: value },
      resourceVersion: String(i + 1),
    });
  }
  return m;
}

/** Request hosts for `registryDocument(n)`: every exact name, and one name under each wildcard. */
export function hostsFor(n: number): string[] {
  const hosts: string[] = [];
  for (let i = 0; i < n; i++) {
    hosts.push(`app-${i}.example.com`);
    if (i % 10 === 0) hosts.push(`w${i}.app-${i}.example.com`);
  }
  return hosts;
}

/** A seeded generator in [0, 1): the same run draws the same hosts and Apps. */
export { seededRandom } from "@replica-mirror/envtest";
