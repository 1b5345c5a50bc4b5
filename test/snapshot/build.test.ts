import { describe, expect, it } from "vitest";
import { build } from "../../src/snapshot/build.ts";
import { findApp, listApps, lookup } from "../../src/snapshot/lookup.ts";
import { UNKEPT_VALUE } from "../../src/snapshot/types.ts";
import { assertConsistent } from "../support/consistency.ts";
import {
  meta,
  registryOf,
  registryStatus,
  SHOP,
  SHOP_DECLARED,
  secretData,
  secretsOf,
} from "../support/world.ts";

const registry = registryOf([
  SHOP,
  { name: "blog", hostnames: ["blog.example.com"], secret: "blog-secret", namespace: "tenant-b" },
]);

describe("build: the rows of the routing contract (README) the pure core decides", () => {
  it("an absent Registry is a valid, empty Snapshot", () => {
    const s = build(null, secretsOf(), meta());
    expect(listApps(s)).toEqual([]);
    expect(lookup(s, "shop.example.com")).toEqual({ kind: "unknown", host: "shop.example.com" });
    assertConsistent(s);
  });

  it.each([
    ["s3cr3t", "its bytes"],
    [UNKEPT_VALUE, "unkept (ADR 68)"],
  ])(
    "an App whose Secret has a non-empty value (%s, %s) is ready, with its resourceVersion",
    (token) => {
      const secrets = secretsOf([["apps/shop-credentials", secretData({ token }, "42")]]);
      const s = build(registry, secrets, meta());
      const { credential: _, ...declared } = SHOP_DECLARED;
      expect(findApp(s, "shop")).toEqual({
        ...declared,
        credentialPrefix: null,
        ready: true,
        reason: null,
        state: "ready",
        // No credential reads it: the value is not the App's to carry.
        secretValue: null,
        credential: null,
        secretResourceVersion: "42",
        certificate: null,
      });
    },
  );

  it.each<[string, ReturnType<typeof secretsOf>, string]>([
    ["absent", secretsOf(), "secret-absent"],
    [
      "without the key",
      secretsOf([["apps/shop-credentials", secretData({ other: "x" })]]),
      "key-missing",
    ],
    [
      "with an empty value",
      secretsOf([["apps/shop-credentials", secretData({ token: "" })]]),
      "value-empty",
    ],
  ])("an App whose Secret is %s is kept and not ready", (_, secrets, reason) => {
    const s = build(registry, secrets, meta());
    const shop = findApp(s, "shop");
    expect(
      shop && { ready: shop.ready, reason: shop.reason, secretValue: shop.secretValue },
    ).toEqual({
      ready: false,
      reason,
      secretValue: null,
    });
    expect(lookup(s, "shop.example.com").kind).toBe("found");
  });

  it("carries revision, build time and the Registry status", () => {
    const given = {
      revision: 7,
      builtAt: 123,
      registry: registryStatus("9", "invalid registry: x"),
    };
    const s = build(registry, secretsOf(), given);
    expect({ revision: s.revision, builtAt: s.builtAt, registry: s.registry }).toEqual(given);
  });

  it("is deeply frozen", () => {
    const s = build(
      registry,
      secretsOf([["apps/shop-credentials", secretData({ token: "x" })]]),
      meta(),
    );
    expect(
      Object.isFrozen(s) && Object.isFrozen(s.registry) && Object.isFrozen(s.apps.chunks),
    ).toBe(true);
    expect(Object.isFrozen(findApp(s, "shop"))).toBe(true);
    expect(() => (s.routes.exact as Map<string, number>).set("evil.example", 0)).toThrow(TypeError);
    expect(() => (s.routes.wildcard as Map<string, number>).clear()).toThrow(TypeError);
    expect(lookup(s, "evil.example").kind).toBe("unknown");
  });

  it("is isolated from later changes to its inputs", () => {
    const data: Record<string, string> = { token: "dmFsdWU=" };
    const secrets = secretsOf([["apps/shop-credentials", { data, resourceVersion: "1" }]]);
    const s = build(registry, secrets, meta());
    data.token = "";
    secrets.delete("apps", "shop-credentials");
    const shop = findApp(s, "shop");
    expect(shop && [shop.ready, shop.secretResourceVersion]).toEqual([true, "1"]);
  });

  it("ignores Secrets no App references", () => {
    const secrets = secretsOf([["apps/unrelated", secretData({ token: "x" })]]);
    expect(build(registry, secrets, meta())).toEqual(build(registry, secretsOf(), meta()));
  });
});

describe("lookup: precedence and conflicts", () => {
  const r = registryOf([
    { name: "zeta", hostnames: ["a.example.com", "*.example.com"] },
    { name: "alpha", hostnames: ["a.example.com"] },
    { name: "deep", hostnames: ["*.b.example.com"] },
    { name: "mid", hostnames: ["*.example.com", "x.b.example.com"] },
  ]);
  const s = build(r, secretsOf(), meta());

  it("lets the App whose name sorts first win a conflict and lists every conflict", () => {
    expect(s.routes.conflicts).toEqual([
      { hostname: "*.example.com", winner: "mid", losers: ["zeta"] },
      { hostname: "a.example.com", winner: "alpha", losers: ["zeta"] },
    ]);
    assertConsistent(s);
  });

  it.each([
    ["a.example.com", "alpha", "exact", "a.example.com"],
    ["x.b.example.com", "mid", "exact", "x.b.example.com"],
    ["y.b.example.com", "deep", "wildcard", "*.b.example.com"],
    ["z.y.b.example.com", "deep", "wildcard", "*.b.example.com"],
    ["b.example.com", "mid", "wildcard", "*.example.com"],
    ["q.example.com:443", "mid", "wildcard", "*.example.com"],
  ])("%s is served by %s (%s %s)", (host, app, match, pattern) => {
    const found = lookup(s, host);
    expect(
      found.kind === "found" && { app: found.app.name, match: found.match, pattern: found.pattern },
    ).toEqual({
      app,
      match,
      pattern,
    });
  });

  it("never matches a wildcard's bare suffix", () => {
    expect(lookup(s, "example.com")).toEqual({ kind: "unknown", host: "example.com" });
  });

  it("answers bad-host for hosts that are not hostnames", () => {
    expect(lookup(s, "[::1]:80")).toEqual({ kind: "bad-host", reason: "ip-literal" });
    expect(lookup(s, "")).toEqual({ kind: "bad-host", reason: "empty" });
  });
});
