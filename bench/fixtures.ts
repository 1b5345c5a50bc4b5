import { gzipSync } from "node:zlib";
import { parseRegistry } from "../src/registry/parse.ts";
import { build } from "../src/snapshot/build.ts";
import { SecretIndex } from "../src/snapshot/secret-index.ts";
import type { SecretData, Snapshot } from "../src/snapshot/types.ts";
import { type AppInput, meta, registryDoc } from "../test/support/world.ts";

/** Above this many Apps the document leaves `upstream` out: with it, 100k Apps gzip to 1.23 MB,
 * over the 1 MiB a Secret may hold. */
const UPSTREAM_UP_TO = 50_000;

/** How a bench Registry's Apps name their upstream, and whether they carry a credential. */
export interface RegistryOptions {
  /** Every App's `upstream` (a server the bench runs); default: a cluster DNS name per App. */
  readonly upstream?: string;
  /**
   * Every App's `credential` (ADR 53): with `--serve-credentials true` its upstream gets
   * `Authorization: <prefix><its Secret's value>`; default: none.
   */
  readonly credential?: { readonly prefix?: string };
  /** The App Secret key every App reads; default `token`. */
  readonly key?: string;
  /** The first this many Apps name a TLS Secret, `app-<i>-tls` (ADR 56); default none. */
  readonly tlsApps?: number;
}

/** A Registry document with `n` Apps: an exact hostname each, and a wildcard on every tenth. */
export function registryDocument(
  n: number,
  options: RegistryOptions = {},
): ReturnType<typeof registryDoc> {
  const apps: AppInput[] = [];
  for (let i = 0; i < n; i++) {
    const name = `app-${i}`;
    const hostnames = [`${name}.example.com`];
    if (i % 10 === 0) hostnames.push(`*.${name}.example.com`);
    apps.push({
      name,
      hostnames,
      namespace: `tenant-${i % 50}`,
      ...(options.upstream !== undefined
        ? { upstream: options.upstream }
        : n > UPSTREAM_UP_TO
          ? {}
          : { upstream: `http://${name}.tenant-${i % 50}.svc.cluster.local:8080` }),
      ...(options.credential === undefined ? {} : { credential: options.credential }),
      ...(options.key === undefined ? {} : { key: options.key }),
      ...(i < (options.tlsApps ?? 0) ? { tls: `${name}-tls` } : {}),
    });
  }
  return registryDoc(apps);
}

export function registryBytes(n: number, gzip: boolean, options: RegistryOptions = {}): Buffer {
  const json = Buffer.from(JSON.stringify(registryDocument(n, options)));
  return gzip ? gzipSync(json, { level: 9 }) : json;
}

/** Secrets for the Apps of `registryDocument(n)`, each with a `valueBytes`-long token. */
export function secretsFor(n: number, valueBytes = 32): SecretIndex<SecretData> {
  const m = new SecretIndex<SecretData>();
  for (let i = 0; i < n; i++) {
    const value = Buffer.alloc(valueBytes, i % 256).toString("latin1");
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

/** The first Snapshot of the bench Registry of `n` Apps (parsed from its gzip bytes), every App ready. */
export function snapshotFor(n: number, valueBytes = 32): Snapshot {
  const parsed = parseRegistry(registryBytes(n, true), { defaultNamespace: "default" });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return build(parsed.value.registry, secretsFor(n, valueBytes), meta(1, Date.now()));
}

/**
 * The headers a routed answer carries for every host of `hostsFor(n)`: the App's name, its
 * upstream and the first revision (a wildcard host answers with its App, as the sidecar does).
 */
export function answersFor(n: number): Record<string, Record<string, string>> {
  const answers: Record<string, Record<string, string>> = {};
  for (const app of registryDocument(n).apps) {
    const name = app.name as string;
    const headers: Record<string, string> = { "x-mirror-app": name };
    if (typeof app.upstream === "string") headers["x-mirror-upstream"] = app.upstream;
    headers["x-mirror-revision"] = "1";
    for (const pattern of app.hostnames as string[]) {
      const host = pattern.startsWith("*.")
        ? `w${name.slice("app-".length)}.${pattern.slice(2)}`
        : pattern;
      answers[host] = headers;
    }
  }
  return answers;
}

/** A seeded generator in [0, 1): the same run draws the same hosts and Apps. */
export { seededRandom } from "@replica-mirror/envtest";
