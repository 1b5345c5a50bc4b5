// Certificates for the TLS part of the data-plane bench: one per App for the first Apps of the
// bench Registry (bench/fixtures.ts), each for the App's hostnames, self-signed with one shared
// EC P-256 key (a key per certificate would cost a second openssl run each and change nothing a
// proxy does by SNI), made by `openssl` a few at a time.

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Envtest } from "@replica-mirror/envtest";

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

/** Writes each certificate into its App's TLS Secret; resolves with the last resourceVersion. */
export async function writeTlsSecrets(
  envtest: Envtest,
  certificates: readonly BenchCertificate[],
): Promise<void> {
  for (const [i, c] of certificates.entries()) {
    envtest.apply({ ...appTlsSecret(c.app), data: { "tls.crt": c.crt, "tls.key": c.key } });
    if (i % 200 === 199) await new Promise<void>((r) => setImmediate(r));
  }
}

/** Writes each certificate as one PEM file (chain, then key) in `dir`; returns the paths in order. */
export async function writeCertificateFiles(
  dir: string,
  certificates: readonly BenchCertificate[],
): Promise<string[]> {
  return Promise.all(
    certificates.map(async (c) => {
      const file = join(dir, `app-${c.app}.pem`);
      await writeFile(file, `${c.crt}${c.key}`, { mode: 0o600 });
      return file;
    }),
  );
}
