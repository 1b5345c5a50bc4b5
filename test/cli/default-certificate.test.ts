// `replica-mirror default-certificate`: a new self-signed certificate and key in one file, mode
// 0600, that openssl and node:crypto both read as a matching pair (ADR 56).

import { execFileSync } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDefaultCertificate } from "../../src/cli/default-certificate.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-default-cert-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(...args: string[]) {
  const lines: string[] = [];
  const code = await runDefaultCertificate(
    args,
    (l) => lines.push(l),
    (l) => lines.push(l),
  );
  return { code, lines };
}

describe("default-certificate", () => {
  it("writes a matching self-signed pair, mode 0600, a new key each time", async () => {
    const [a, b] = [join(dir, "a.pem"), join(dir, "b.pem")];
    expect((await run("--out", a, "--days", "30")).code).toBe(0);
    expect((await run("--out", b)).code).toBe(0);
    const pem = await readFile(a, "utf8");
    const cert = new X509Certificate(pem);
    const days = (cert.validToDate.getTime() - Date.now()) / 86_400_000;
    expect({
      subject: cert.subject,
      matches: cert.checkPrivateKey(createPrivateKey(pem)),
      selfSigned: cert.verify(cert.publicKey),
      days: Math.round(days),
      mode: (await stat(a)).mode & 0o777,
      openssl: execFileSync("openssl", ["verify", "-CAfile", a, a], { encoding: "utf8" }).trim(),
      newKey:
        pem.split("-----BEGIN PRIVATE KEY-----")[1] !==
        (await readFile(b, "utf8")).split("-----BEGIN PRIVATE KEY-----")[1],
    }).toEqual({
      subject: "CN=replica-mirror-default",
      matches: true,
      selfSigned: true,
      days: 30,
      mode: 0o600,
      openssl: `${a}: OK`,
      newKey: true,
    });
  });

  it("exits 2 without --out or with a bad --days, and 1 when it cannot write", async () => {
    expect([
      (await run()).code,
      (await run("--out", join(dir, "c.pem"), "--days", "0")).code,
      (await run("--out", join(dir, "missing", "c.pem"))).code,
    ]).toEqual([2, 2, 1]);
  });
});
