// An App's certificate (ADR 56): what `checkCertificate` accepts and refuses, and how a Snapshot
// keeps an App's last good certificate, never another App's.

import { X509Certificate } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import { checkCertificate } from "../../src/snapshot/certificate.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { BUILT_AT, meta, registryOf, secretData, secretsOf } from "../support/world.ts";

const DAY = 86_400_000;
let shop: TestCertificate;
let shopRenewed: TestCertificate;
let other: TestCertificate;
let edge: TestCertificate;

beforeAll(() => {
  const notBefore = new Date(BUILT_AT - DAY);
  const notAfter = new Date(BUILT_AT + 30 * DAY);
  shop = makeCertificate({
    names: ["shop.example.com", "*.shop.example.com"],
    notBefore,
    notAfter,
  });
  shopRenewed = makeCertificate({ names: ["shop.example.com", "*.shop.example.com"], notBefore });
  other = makeCertificate({ names: ["other.example.com"], notBefore, notAfter });
  edge = makeCertificate({ names: ["*.example.com"], notBefore, notAfter });
});

const HOSTS = ["shop.example.com", "*.shop.example.com"];

describe("checkCertificate", () => {
  it("serves a pair whose key is the certificate's, within its validity, covering every hostname", () => {
    const got = checkCertificate(shop.crt, shop.key, HOSTS, BUILT_AT, "7");
    const leaf = new X509Certificate(shop.crt);
    expect(
      got.ok && { ...got.value, key: got.value.key.startsWith("-----BEGIN PRIVATE KEY-----") },
    ).toEqual({
      chain: leaf.toString(),
      key: true,
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      serial: leaf.serialNumber.toUpperCase(),
      notBefore: leaf.validFromDate.getTime(),
      notAfter: leaf.validToDate.getTime(),
      resourceVersion: "7",
    });
  });

  it("covers an exact hostname with a wildcard name one label up, never a wildcard with less", () => {
    expect(checkCertificate(edge.crt, edge.key, ["a.example.com"], BUILT_AT, "1").ok).toBe(true);
    for (const hostnames of [["a.b.example.com"], ["*.example.com.evil"], ["example.com"]])
      expect(checkCertificate(edge.crt, edge.key, hostnames, BUILT_AT, "1")).toEqual({
        ok: false,
        error: { rule: "hostname-not-covered", hostname: hostnames[0] },
      });
    // A wildcard hostname needs the same wildcard name.
    expect(checkCertificate(shop.crt, shop.key, ["*.example.com"], BUILT_AT, "1")).toEqual({
      ok: false,
      error: { rule: "hostname-not-covered", hostname: "*.example.com" },
    });
  });

  it("refuses each broken rule by name", () => {
    const cases: [string, string, number, string][] = [
      [shop.crt, other.key, BUILT_AT, "key-mismatch"],
      ["not a certificate", shop.key, BUILT_AT, "not-a-certificate"],
      [
        `${shop.crt.slice(0, 60)}-----END CERTIFICATE-----`,
        shop.key,
        BUILT_AT,
        "not-a-certificate",
      ],
      [shop.crt, "not a key", BUILT_AT, "not-a-key"],
      [shop.crt, shop.key, BUILT_AT - 2 * DAY, "not-yet-valid"],
      [shop.crt, shop.key, BUILT_AT + 31 * DAY, "expired"],
      [`${shop.crt}${"x".repeat(70_000)}`, shop.key, BUILT_AT, "not-a-certificate"],
      // Thirty certificates: over what HAProxy takes in one command, though each parses.
      [shop.crt.repeat(30), shop.key, BUILT_AT, "too-large"],
    ];
    expect(cases.map(([c, k, now]) => checkCertificate(c, k, HOSTS, now, "1"))).toEqual(
      cases.map(([, , , rule]) => ({ ok: false, error: { rule } })),
    );
  });

  it("hands a proxy the chain without the text around it, and nothing of the key's but a PKCS#8 PEM", () => {
    const noisy = `subject=/CN=shop\n\n${shop.crt}\n\n${other.crt}trailing words\n`;
    const got = checkCertificate(noisy, `comment\n${shop.key}`, HOSTS, BUILT_AT, "1");
    const chain = `${new X509Certificate(shop.crt).toString()}${new X509Certificate(other.crt).toString()}`;
    expect(got.ok && [got.value.chain, /\n\n/.test(got.value.chain + got.value.key)]).toEqual([
      chain,
      false,
    ]);
  });
});

describe("an App's certificate in the Snapshot", () => {
  const registry = registryOf([
    { name: "shop", hostnames: HOSTS, tls: "shop-tls" },
    { name: "plain", hostnames: ["plain.example.com"] },
  ]);
  const at = (revision: number, serveCertificates = true) => ({
    ...meta(revision),
    serveCertificates,
  });
  const withTls = (cert: TestCertificate | null, rv: string) =>
    secretsOf(cert === null ? [] : [["apps/shop-tls", secretData(tlsSecretData(cert), rv)]]);
  const TLS_SECRET = [{ namespace: "apps", name: "shop-tls" }];

  it("is off without --serve-certificates, and absent for an App without tls", () => {
    const s = build(registry, withTls(shop, "1"), at(1, false));
    expect([findApp(s, "shop")?.certificate, findApp(s, "plain")?.certificate]).toEqual([
      { state: "off", served: null, refusal: null, resourceVersion: null },
      null,
    ]);
  });

  it("keeps the last good certificate through a refused renewal and a deleted Secret, then takes a good one", () => {
    const first = build(registry, withTls(shop, "1"), at(1));
    const good = findApp(first, "shop")!.certificate!.served!;
    const mismatched = { crt: shopRenewed.crt, key: other.key };
    const refused = rebuildForSecrets(first, TLS_SECRET, withTls(mismatched, "2"), at(2));
    const deleted = rebuildForSecrets(refused, TLS_SECRET, withTls(null, "3"), at(3));
    const renewed = rebuildForSecrets(deleted, TLS_SECRET, withTls(shopRenewed, "4"), at(4));
    expect([refused, deleted, renewed].map((s) => findApp(s, "shop")!.certificate)).toEqual([
      { state: "refused", served: good, refusal: { rule: "key-mismatch" }, resourceVersion: "2" },
      { state: "refused", served: good, refusal: { rule: "secret-absent" }, resourceVersion: null },
      {
        state: "served",
        served: expect.objectContaining({ resourceVersion: "4" }),
        refusal: null,
        resourceVersion: "4",
      },
    ]);
    expect(findApp(renewed, "shop")!.certificate!.served!.id).not.toBe(good.id);
  });

  it("keeps the last good one across a Registry change, unless the App's hostnames changed", () => {
    const first = build(registry, withTls(shop, "1"), at(1));
    const good = findApp(first, "shop")!.certificate!.served!;
    const refusedSecrets = withTls({ crt: shop.crt, key: other.key }, "2");
    const same = build(
      registryOf([{ name: "shop", hostnames: HOSTS, tls: "shop-tls" }]),
      refusedSecrets,
      at(2),
      first,
    );
    const moved = build(
      registryOf([{ name: "shop", hostnames: ["shop.example.com"], tls: "shop-tls" }]),
      refusedSecrets,
      at(2),
      first,
    );
    // Another App under the name's hostnames gets nothing of shop's.
    const renamed = build(
      registryOf([{ name: "shop-2", hostnames: HOSTS, tls: "shop-tls" }]),
      refusedSecrets,
      at(2),
      first,
    );
    expect([
      findApp(same, "shop")!.certificate!.served,
      findApp(moved, "shop")!.certificate!.served,
      findApp(renamed, "shop-2")!.certificate!.served,
    ]).toEqual([good, null, null]);
  });

  it("checks a Secret version once: a rebuild for another Secret keeps the same object", () => {
    const secrets = secretsOf([
      ["apps/shop-tls", secretData(tlsSecretData(shop), "1")],
      ["apps/plain-credentials", secretData({ token: "p" }, "1")],
    ]);
    const first = build(registry, secrets, at(1));
    const again = build(registry, secrets, at(2), first);
    expect(findApp(again, "shop")!.certificate).toBe(findApp(first, "shop")!.certificate);
  });

  it("re-resolves the App when its TLS Secret changes, as a whole build of the same inputs would", () => {
    const first = build(registry, withTls(shop, "1"), at(1));
    const next = rebuildForSecrets(first, TLS_SECRET, withTls(shopRenewed, "2"), at(2));
    expect(next).toEqual(build(registry, withTls(shopRenewed, "2"), at(2), first));
  });
});
