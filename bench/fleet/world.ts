// The cluster a fleet runs against: a Registry of Apps whose Secrets carry the App label, more
// labelled App Secrets that a Registry edit will reference later, and the Secrets other software
// writes all day (Helm releases, certificates, tokens), unlabelled and never referenced.

import type { Envtest } from "@replica-mirror/envtest";
import {
  type AppInput,
  REGISTRY_NAME,
  REGISTRY_NS,
  writeRegistry,
} from "../../test/support/world.ts";

/** The label every App Secret carries, and the `--secret-selector` that picks them. */
export const APP_LABEL = "replica-mirror.example/app";
export const APP_SELECTOR = `${APP_LABEL}=true`;

/** Namespaces App Secrets and unrelated Secrets are spread over. */
const NAMESPACES = 50;

/** How big the world is. */
export interface WorldSize {
  /** Apps in the Registry at rest. */
  readonly apps: number;
  /** Labelled App Secrets beyond those, for the Registry edit that adds Apps. */
  readonly added: number;
  /** Every Secret in the cluster, the Registry included; the rest are unrelated. */
  readonly secrets: number;
  /** Bytes of each Secret's one value. */
  readonly valueBytes: number;
}

/** What seeding wrote. */
export interface WorldFacts {
  readonly secrets: number;
  readonly unrelated: number;
  /** JSON bytes of every Secret as a list or watch sends it (the Registry excluded). */
  readonly secretJsonBytes: number;
}

/** The Secret App `i` references. */
export function appSecret(i: number): { namespace: string; name: string } {
  return { namespace: `tenant-${i % NAMESPACES}`, name: `app-${i}-credentials` };
}

/** The name of App `i`. */
export function appName(i: number): string {
  return `app-${i}`;
}

/** An unrelated Secret, named as Helm names its release Secrets. */
function unrelatedSecret(j: number): { namespace: string; name: string } {
  return { namespace: `team-${j % NAMESPACES}`, name: `sh.helm.release.v1.release-${j}.v1` };
}

/** A distinct value of exactly `bytes` ASCII bytes. */
function value(i: number, bytes: number, tag: string): string {
  return `${tag}:${i}:`.padEnd(bytes, "x").slice(0, bytes);
}

/** Apps `0 .. n-1` as the Registry declares them. */
export function appsUpTo(n: number): AppInput[] {
  return Array.from({ length: n }, (_, i) => ({
    name: appName(i),
    hostnames: [`${appName(i)}.example.com`],
    namespace: appSecret(i).namespace,
    secret: appSecret(i).name,
    key: "token",
    upstream: `http://${appName(i)}.${appSecret(i).namespace}.svc.cluster.local:8080`,
  }));
}

/** Writes the Registry with Apps `0 .. n-1` (gzip: 10k Apps do not fit 1 MiB as JSON). */
export function writeRegistryOf(
  envtest: Envtest,
  n: number,
): { resourceVersion: string; bytes: number } {
  const resourceVersion = writeRegistry(envtest, appsUpTo(n), { gzip: true });
  const stored = envtest.get(REGISTRY_NS, REGISTRY_NAME);
  return { resourceVersion, bytes: Buffer.byteLength(JSON.stringify(stored)) };
}

const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

/** Writes the whole world; yields now and then so the server keeps answering. */
export async function seedWorld(envtest: Envtest, size: WorldSize): Promise<WorldFacts> {
  const labelled = size.apps + size.added;
  const unrelated = Math.max(0, size.secrets - labelled - 1);
  let secretJsonBytes = 0;
  for (let i = 0; i < labelled; i++) {
    const s = envtest.apply({
      ...appSecret(i),
      labels: { [APP_LABEL]: "true" },
      data: { token: value(i, size.valueBytes, "v0") },
    });
    secretJsonBytes += Buffer.byteLength(JSON.stringify(s));
    if (i % 1000 === 999) await yieldToLoop();
  }
  for (let j = 0; j < unrelated; j++) {
    const s = envtest.apply({
      ...unrelatedSecret(j),
      labels: { owner: "helm" },
      data: { release: value(j, size.valueBytes, "r0") },
    });
    secretJsonBytes += Buffer.byteLength(JSON.stringify(s));
    if (j % 1000 === 999) await yieldToLoop();
  }
  writeRegistryOf(envtest, size.apps);
  return { secrets: labelled + unrelated + 1, unrelated, secretJsonBytes };
}

/** JSON bytes of the App Secrets `from .. to-1`, as a list, a GET or a watch event carries each. */
export function appSecretsJsonBytes(envtest: Envtest, from: number, to: number): number {
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const s = envtest.get(appSecret(i).namespace, appSecret(i).name);
    if (s !== undefined) bytes += Buffer.byteLength(JSON.stringify(s));
  }
  return bytes;
}

/** Rewrites App `i`'s Secret with a new value; returns its resourceVersion. */
export function touchApp(envtest: Envtest, i: number, bytes: number, tag: string): string {
  return envtest.apply({ ...appSecret(i), data: { token: value(i, bytes, tag) } }).metadata
    .resourceVersion;
}

/** Rewrites unrelated Secret `j` with a new value. */
export function touchUnrelated(envtest: Envtest, j: number, bytes: number, tag: string): void {
  envtest.apply({ ...unrelatedSecret(j), data: { release: value(j, bytes, tag) } });
}
