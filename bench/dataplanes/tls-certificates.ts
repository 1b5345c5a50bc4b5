// Certificates for the TLS part of the data-plane bench: one per App for the first Apps of the
// bench Registry (bench/fixtures.ts), each for the App's hostnames, self-signed with one shared
// EC P-256 key (a key per certificate would cost a second openssl run each and change nothing a
// proxy does by SNI), made by `openssl` a few at a time.

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseRegistryDocument } from "../../src/registry/parse.ts";
import { build } from "../../src/snapshot/build.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { PushView, SecretData } from "../../src/snapshot/types.ts";
import { meta } from "../../test/support/world.ts";
import { registryDocument } from "../fixtures.ts";
import type { WorldCluster } from "./cluster-process.ts";

const run = promisify(execFile);

/** App `i`'s certificate: its names and PEM. */
export interface BenchCertificate {
  readonly app: number;
  /** The App's hostnames, as the bench Registry declares them. */
  readonly names: readonly string[];
  readonly crt: string;
  readonly key: string;
}

/** The hostnames of App `i` in `registryDocument` (an exact one; a wildcard on every tenth). */
export const appHostnames = (i: number): string[] =>
  i % 10 === 0 ? [`app-${i}.example.com`, `*.app-${i}.example.com`] : [`app-${i}.example.com`];

/** App `i`'s TLS Secret, beside its App Secret. */
export const appTlsSecret = (i: number) => ({
  namespace: `tenant-${i % 50}`,
  name: `app-${i}-tls`,
});

/** Makes the certificates of Apps `apps`, `parallel` openssl runs at a time. */
export async function benchCertificates(
  apps: readonly number[],
  parallel = 4,
): Promise<BenchCertificate[]> {
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-bench-certs-"));
  try {
    const keyFile = join(dir, "key.pem");
    await run("openssl", [
      "genpkey",
      "-algorithm",
      "EC",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-out",
      keyFile,
    ]);
    const key = await readFile(keyFile, "latin1");
    const out: BenchCertificate[] = [];
    for (let start = 0; start < apps.length; start += parallel) {
      const batch = apps.slice(start, start + parallel);
      out.push(
        ...(await Promise.all(
          batch.map(async (app) => {
            const names = appHostnames(app);
            const { stdout } = await run("openssl", [
              "req",
              "-x509",
              "-new",
              "-key",
              keyFile,
              "-subj",
              `/CN=${names[0]}`,
              "-addext",
              `subjectAltName=${names.map((n) => `DNS:${n}`).join(",")}`,
              "-days",
              "30",
            ]);
            return { app, names, crt: stdout, key };
          }),
        )),
      );
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes each certificate into its App's TLS Secret; resolves once the API server stored them. */
export async function writeTlsSecrets(
  cluster: WorldCluster,
  certificates: readonly BenchCertificate[],
): Promise<void> {
  await cluster.write(certificates.map(tlsSecretOf));
}

/** App `c.app`'s TLS Secret holding certificate `c`. */
export const tlsSecretOf = (c: BenchCertificate) => ({
  ...appTlsSecret(c.app),
  data: { "tls.crt": c.crt, "tls.key": c.key },
});

/**
 * The view a sidecar with `--serve-certificates true` pushes for the bench Registry of `apps`
 * Apps whose first ones carry `certificates`, built in this process for the files side.
 */
export function benchView(
  apps: number,
  certificates: readonly BenchCertificate[],
  upstream: string,
): PushView {
  const parsed = parseRegistryDocument(
    registryDocument(apps, { upstream, tlsApps: certificates.length }),
    { defaultNamespace: "platform", allowLocalUpstreams: true },
  );
  if (!parsed.ok) throw new Error(parsed.error.message);
  const secrets = new SecretIndex<SecretData>();
  for (const c of certificates) {
    const { namespace, name } = appTlsSecret(c.app);
    secrets.set(namespace, name, {
      data: { "tls.crt": c.crt, "tls.key": c.key },
      resourceVersion: "1",
    });
  }
  return build(parsed.value.registry, secrets, { ...meta(1, Date.now()), serveCertificates: true });
}
