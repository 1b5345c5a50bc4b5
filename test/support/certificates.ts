// Certificates for tests and the bench, made by the `openssl` command (Debian's; .ci/run installs
// it): self-signed, EC P-256 (fast to make), with the DNS names asked for. A validity in the past
// or the future is signed with `openssl ca -selfsign`, the one way openssl 3.0 sets both dates.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runDefaultCertificate } from "../../src/cli/default-certificate.ts";

/** A certificate and its key as a `kubernetes.io/tls` Secret holds them. */
export interface TestCertificate {
  /** `tls.crt`: PEM. */
  readonly crt: string;
  /** `tls.key`: PEM, unencrypted. */
  readonly key: string;
}

export interface CertificateOptions {
  /** DNS names: the first is also the subject's CN. */
  readonly names: readonly string[];
  /** Validity; default: from a day ago for 30 days. */
  readonly notBefore?: Date;
  readonly notAfter?: Date;
}

const CA_CONFIG = `[ca]
default_ca = local
[local]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
[any]
commonName = supplied
`;

/** A new self-signed certificate for `names`, with a new key. */
export function makeCertificate(options: CertificateOptions): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), "replica-mirror-cert-"));
  try {
    const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
    const subject = ["-subj", `/CN=${options.names[0]}`];
    const san = ["-addext", `subjectAltName=${options.names.map((n) => `DNS:${n}`).join(",")}`];
    const newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    const notBefore = options.notBefore ?? new Date(Date.now() - 86_400_000);
    const notAfter = options.notAfter ?? new Date(notBefore.getTime() + 30 * 86_400_000);
    writeFileSync(join(dir, "ca.cnf"), CA_CONFIG);
    writeFileSync(join(dir, "index.txt"), "");
    writeFileSync(join(dir, "serial"), "01\n");
    run(["req", "-new", ...newKey, ...subject, ...san, "-keyout", "key.pem", "-out", "req.csr"]);
    run([
      "ca",
      "-batch",
      "-selfsign",
      "-rand_serial",
      "-notext",
      "-config",
      "ca.cnf",
      "-keyfile",
      "key.pem",
      "-in",
      "req.csr",
      "-startdate",
      asn1Time(notBefore),
      "-enddate",
      asn1Time(notAfter),
      "-out",
      "crt.pem",
    ]);
    return {
      crt: readFileSync(join(dir, "crt.pem"), "latin1"),
      key: readFileSync(join(dir, "key.pem"), "latin1"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Writes a proxy's default certificate at `path` the way the shipped init step does: the image's
 * `replica-mirror default-certificate --out PATH` (certificate and key in one PEM file).
 */
export async function writeDefaultCertificate(path: string): Promise<void> {
  const failed: string[] = [];
  const code = await runDefaultCertificate(
    ["--out", path, "--days", "30"],
    () => {},
    (l) => failed.push(l),
  );
  if (code !== 0) throw new Error(failed.join("\n"));
}

/** A Secret's data for a `kubernetes.io/tls` Secret holding `cert`. */
export const tlsSecretData = (cert: TestCertificate): Record<string, string> => ({
  "tls.crt": cert.crt,
  "tls.key": cert.key,
});

/** `YYYYMMDDHHMMSSZ`, as `openssl ca -startdate` takes it. */
function asn1Time(at: Date): string {
  return `${at.toISOString().replace(/[-:T]/g, "").slice(0, 14)}Z`;
}
