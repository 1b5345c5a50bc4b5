/** A self-signed certificate for 127.0.0.1 and localhost, made with the openssl CLI. */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** PEM-encoded private key and certificate. */
interface KeyPair {
  readonly key: string;
  readonly cert: string;
}

let cached: Promise<KeyPair | undefined> | undefined;

async function generate(): Promise<KeyPair | undefined> {
  const dir = await mkdtemp(join(tmpdir(), "envtest-tls-"));
  try {
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    await run(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "365",
        "-subj",
        "/CN=replica-mirror-envtest",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { timeout: 10_000 },
    );
    return { key: await readFile(key, "utf8"), cert: await readFile(cert, "utf8") };
  } catch {
    return undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The process's certificate (generated once), or undefined when openssl is unavailable. */
export function selfSignedCertificate(): Promise<KeyPair | undefined> {
  cached ??= generate();
  return cached;
}
