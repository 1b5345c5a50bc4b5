// nginx's certificate lines (nginx-certificates.ts): the whole table's `n` and `k` lines in the
// orders nginx's digest rebuilds, and a rotation as the App's one `k` line. Lines are compared
// with their PEM fields as digests, so that a failure prints no key.

import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { certificateEntries } from "../../src/push/certificates.ts";
import { certificateChanges, nginxCertificateLines } from "../../src/push/nginx-certificates.ts";
import { nginxChangesBody } from "../../src/push/nginx-changes.ts";
import { nginxBase, nginxTableBody } from "../../src/push/nginx-table.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";

const short = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);

/** A body line with the PEM fields of a `k` line as digests of the PEM they stand for. */
const redacted = (line: string) =>
  line.replace(
    /^(k \S+ [0-9a-f]{16});([^;]*);(.*)$/,
    (_, head: string, chain: string, key: string) =>
      `${head};<${short(`${chain.replaceAll("|", "\n")}\n`)}>;<${short(`${key.replaceAll("|", "\n")}\n`)}>`,
  );

/** The redacted `k` line of an App's served certificate in `s`. */
const kLine = (s: Snapshot, app: string) => {
  const served = findApp(s, app)!.certificate!.served!;
  return `k ${app} ${served.id};<${short(served.chain)}>;<${short(served.key)}>`;
};

let a: TestCertificate;
let b: TestCertificate;
let renewed: TestCertificate;

beforeAll(() => {
  a = makeCertificate({ names: ["a.example.com", "*.a.example.com"] });
  b = makeCertificate({ names: ["b.example.com", "z.example.com"] });
  renewed = makeCertificate({ names: ["a.example.com", "*.a.example.com"] });
});

const apps = [
  { name: "a", hostnames: ["a.example.com", "*.a.example.com"], tls: "a-tls" },
  { name: "b", hostnames: ["z.example.com", "b.example.com"], tls: "b-tls" },
  { name: "c", hostnames: ["c.example.com"] },
];
const at = (revision: number) => ({ ...meta(revision, Date.now()), serveCertificates: true });
const secrets = (aCert: TestCertificate, aVersion: string) =>
  secretsOf([
    ["apps/a-tls", secretData(tlsSecretData(aCert), aVersion)],
    ["apps/b-tls", secretData(tlsSecretData(b), "1")],
  ]);
const rotated = (from: Snapshot, revision: number) =>
  rebuildForSecrets(
    from,
    [{ namespace: "apps", name: "a-tls" }],
    secrets(renewed, `${revision}`),
    at(revision),
  );

describe("nginx's certificate lines", () => {
  it("list every name by name, then every certificate by App, after the credentials", () => {
    const s = build(registryOf(apps), secrets(a, "1"), at(1));
    const body = nginxTableBody(s).split("\n");
    expect({
      lines: nginxCertificateLines(s).map(redacted),
      last: body.slice(-7).map(redacted),
    }).toEqual({
      lines: [
        "n *.a.example.com a",
        "n a.example.com a",
        "n b.example.com b",
        "n z.example.com b",
        kLine(s, "a"),
        kLine(s, "b"),
      ],
      last: [
        "n *.a.example.com a",
        "n a.example.com a",
        "n b.example.com b",
        "n z.example.com b",
        kLine(s, "a"),
        kLine(s, "b"),
        "",
      ],
    });
  });

  it("are none for a view without certificates, whose body is what it was", () => {
    const s = build(registryOf(apps.map(({ tls, ...app }) => app)), secrets(a, "1"), at(1));
    expect({ lines: nginxCertificateLines(s), body: nginxTableBody(s) }).toEqual({
      lines: [],
      body: "revision 1\n= c.example.com S|c\n= z.example.com S|b\n= b.example.com S|b\n= a.example.com S|a\n* a.example.com S|a\n",
    });
  });

  it("send a rotation as the App's one k line", () => {
    const s = build(registryOf(apps), secrets(a, "1"), at(1));
    const next = rotated(s, 2);
    const patch = nginxChangesBody(next, nginxBase(s, "9"), 2_000);
    expect(patch?.split("\n").map(redacted)).toEqual([
      "revision 2",
      "base 9",
      kLine(next, "a"),
      "",
    ]);
  });

  it("send the whole table when more certificate lines changed than a PATCH may carry", () => {
    const s = build(registryOf(apps), secrets(a, "1"), at(1));
    expect(nginxChangesBody(rotated(s, 2), nginxBase(s, "9"), 2_000, 0)).toBe(null);
  });

  it("remove an App's certificate and names when it has none, and add them back", () => {
    const served = build(registryOf(apps), secrets(a, "1"), at(1));
    const none = build(
      registryOf(apps),
      secretsOf([["apps/b-tls", secretData(tlsSecretData(b), "1")]]),
      at(2),
    );
    const [withA, withoutA] = [certificateEntries(served), certificateEntries(none)];
    expect({
      removed: certificateChanges(withoutA, withA).map(redacted),
      added: certificateChanges(withA, withoutA).map(redacted),
      same: certificateChanges(withA, certificateEntries(served)),
    }).toEqual({
      removed: ["k a ", "n *.a.example.com ", "n a.example.com "],
      added: [kLine(served, "a"), "n *.a.example.com a", "n a.example.com a"],
      same: [],
    });
  });
});
