// Which certificate a proxy serves for which SNI name (ADR 56): an App's certificate for the names
// it holds in the hostname index, never for a name another App won.

import { beforeAll, describe, expect, it } from "vitest";
import { certificateEntries } from "../../src/push/certificates.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";

let a: TestCertificate;
let b: TestCertificate;

beforeAll(() => {
  a = makeCertificate({ names: ["x.example.com", "*.a.example.com"] });
  b = makeCertificate({ names: ["x.example.com", "b.example.com"] });
});

describe("certificateEntries", () => {
  const registry = registryOf([
    { name: "a", hostnames: ["x.example.com", "*.a.example.com"], tls: "a-tls" },
    { name: "b", hostnames: ["x.example.com", "b.example.com"], tls: "b-tls" },
    { name: "c", hostnames: ["c.example.com"] },
    { name: "d", hostnames: ["d.example.com"], tls: "d-tls" },
  ]);
  const at = (revision: number) => ({ ...meta(revision, Date.now()), serveCertificates: true });
  const secrets = (bCert: TestCertificate, bVersion = "2") =>
    secretsOf([
      ["apps/a-tls", secretData(tlsSecretData(a), "1")],
      ["apps/b-tls", secretData(tlsSecretData(bCert), bVersion)],
    ]);

  it("lists each served certificate with the names its App holds, by App", () => {
    const s = build(registry, secrets(b), at(1));
    expect(certificateEntries(s)).toEqual([
      {
        app: "a",
        certificate: findApp(s, "a")!.certificate!.served,
        names: ["*.a.example.com", "x.example.com"],
      },
      // x.example.com is a's (the first by name): b's certificate is not served for it.
      { app: "b", certificate: findApp(s, "b")!.certificate!.served, names: ["b.example.com"] },
    ]);
  });

  it("follows a rotation of one App and keeps the other's entry as it was", () => {
    const first = build(registry, secrets(b), at(1));
    const renewed = makeCertificate({ names: ["x.example.com", "b.example.com"] });
    const next = rebuildForSecrets(
      first,
      [{ namespace: "apps", name: "b-tls" }],
      secrets(renewed, "3"),
      at(2),
    );
    const [before, after] = [certificateEntries(first), certificateEntries(next)];
    expect([after[0], after[1]!.certificate.id]).toEqual([
      before[0],
      findApp(next, "b")!.certificate!.served!.id,
    ]);
    expect(after[1]!.certificate.id).not.toBe(before[1]!.certificate.id);
  });
});
