// The log and the metrics tell an operator about certificates (ADR 56): one line per App when its
// certificate is refused (naming the rule) or certificates are off, nothing more while it stays
// so; the gauges count each state and give the first expiry. Never a byte of a key.

import { beforeAll, describe, expect, it } from "vitest";
import { certificateSummary } from "../../src/ops/certificate-metrics.ts";
import { logObserver } from "../../src/ops/log-observer.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { SecretData, Snapshot } from "../../src/snapshot/types.ts";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { type AppInput, meta, registryOf, secretData } from "../support/world.ts";

const apps: AppInput[] = [
  { name: "shop", hostnames: ["shop.example.com"], tls: "shop-tls" },
  { name: "blog", hostnames: ["blog.example.com"], tls: "blog-tls" },
  { name: "plain", hostnames: ["plain.example.com"] },
];
let shop: TestCertificate;
let blog: TestCertificate;

beforeAll(() => {
  shop = makeCertificate({ names: ["shop.example.com"] });
  blog = makeCertificate({ names: ["blog.example.com"] });
});

const at = (revision: number, serveCertificates = true) => ({
  ...meta(revision, Date.now()),
  serveCertificates,
});

describe("certificates in the log and the metrics", () => {
  it("logs each App once as it enters a refusal, names the rule, and never the key", () => {
    const { logger, lines } = memoryLogger("trace");
    const observer = logObserver(logger);
    const secrets = new SecretIndex<SecretData>();
    secrets.set("apps", "shop-tls", secretData(tlsSecretData(shop), "1"));
    secrets.set("apps", "blog-tls", secretData(tlsSecretData(blog), "1"));
    const publish = (snapshot: Snapshot) =>
      observer.published?.({ snapshot, kind: "secrets", buildMs: 1, eventToSwapMs: 1 });
    const change = (s: Snapshot, name: string, data: Record<string, string>, rv: string) => {
      secrets.set("apps", name, secretData(data, rv));
      return rebuildForSecrets(s, [{ namespace: "apps", name }], secrets, at(s.revision + 1));
    };
    const first = build(registryOf(apps), secrets, at(1));
    const mismatched = change(first, "shop-tls", { "tls.crt": shop.crt, "tls.key": blog.key }, "2");
    const blogChanged = change(mismatched, "blog-tls", tlsSecretData(blog), "3");
    const noKey = change(blogChanged, "shop-tls", { "tls.crt": shop.crt }, "4");
    for (const s of [first, mismatched, blogChanged, blogChanged, noKey]) publish(s);
    const warnings = lines()
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.level === 40)
      .map(({ app, reason, msg }) => ({ app, reason, msg }));
    const kept =
      "App's TLS Secret holds a certificate that cannot be served: its last good certificate is still served";
    expect(warnings).toEqual([
      { app: "shop", reason: "key-mismatch", msg: kept },
      { app: "shop", reason: "key-missing", msg: kept },
    ]);
    const text = lines().join("\n");
    for (const key of [shop.key, blog.key])
      expect(text).not.toContain(key.split("\n")[1]!.slice(0, 40));
  });

  it("logs an App with tls once when certificates are off", () => {
    const { logger, lines } = memoryLogger("trace");
    const observer = logObserver(logger);
    const s = build(registryOf(apps), new SecretIndex<SecretData>(), at(1, false));
    for (const snapshot of [s, s])
      observer.published?.({ snapshot, kind: "whole", buildMs: 1, eventToSwapMs: 1 });
    expect(
      lines()
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.level === 40)
        .map((l) => l.app),
    ).toEqual(["blog", "shop"]);
  });

  it("counts each state and gives the first served certificate's expiry", () => {
    const secrets = new SecretIndex<SecretData>();
    secrets.set("apps", "shop-tls", secretData(tlsSecretData(shop), "1"));
    secrets.set("apps", "blog-tls", secretData({ "tls.crt": blog.crt, "tls.key": shop.key }, "1"));
    const s = build(registryOf(apps), secrets, at(1));
    const served = s.apps.chunks[0]!.find((a) => a.name === "shop")!.certificate!.served!;
    expect(certificateSummary(s)).toEqual({
      counts: { served: 1, refused: 1, off: 0 },
      firstExpiry: served.notAfter,
    });
    expect(certificateSummary(build(registryOf(apps), secrets, at(1, false)))).toEqual({
      counts: { served: 0, refused: 0, off: 2 },
      firstExpiry: Number.POSITIVE_INFINITY,
    });
  });
});
