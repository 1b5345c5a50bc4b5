import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseRegistry } from "../../src/registry/parse.ts";
import { REGISTRY_API_VERSION, registryDoc, SHOP_DECLARED } from "../support/world.ts";

const opts = { defaultNamespace: "platform" };
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("parseRegistry", () => {
  it("parses version 1, defaults the namespace, drops unknown fields and ignores secretReady", () => {
    const doc = {
      apiVersion: REGISTRY_API_VERSION,
      futureField: { anything: true },
      apps: [
        {
          name: "shop",
          hostnames: ["SHOP.example.com.", "*.shop.example.com", "shop.example.com"],
          secretRef: { name: "shop-credentials", key: "token" },
          upstream: "http://shop:8080",
          secretReady: false,
          labels: { team: "a" },
        },
        {
          name: "blog",
          hostnames: ["blog.example.com"],
          secretRef: { namespace: "b", name: "blog", key: "t.k_-1" },
        },
      ],
    };
    expect(parseRegistry(bytes(doc), opts)).toEqual({
      ok: true,
      value: {
        apps: [
          { ...SHOP_DECLARED, secretRef: { ...SHOP_DECLARED.secretRef, namespace: "platform" } },
          {
            name: "blog",
            hostnames: ["blog.example.com"],
            secretRef: { namespace: "b", name: "blog", key: "t.k_-1" },
            upstream: null,
          },
        ],
      },
    });
  });

  it("reads gzip-compressed JSON recognised by its magic bytes", () => {
    const doc = registryDoc([{ name: "a", hostnames: ["a.example"] }]);
    const plain = parseRegistry(bytes(doc), opts);
    expect(parseRegistry(gzipSync(bytes(doc)), opts)).toEqual(plain);
    expect(plain.ok).toBe(true);
  });

  it("refuses a compression bomb as a malformed document", () => {
    const bomb = gzipSync(Buffer.alloc(2 * 1024 * 1024, 0x20));
    expect(parseRegistry(bomb, { ...opts, maxDecompressedBytes: 1024 * 1024 })).toEqual({
      ok: false,
      error: {
        message: "invalid registry: gzip value decompresses to more than 1048576 bytes",
        issues: ["gzip value decompresses to more than 1048576 bytes"],
      },
    });
  });

  it("refuses corrupt gzip and non-JSON", () => {
    const corrupt = parseRegistry(Buffer.from([0x1f, 0x8b, 1, 2, 3]), opts);
    expect(
      corrupt.ok || corrupt.error.message.startsWith("invalid registry: gzip value is corrupt"),
    ).toBe(true);
    expect(corrupt.ok).toBe(false);
    const text = parseRegistry(Buffer.from("{nope"), opts);
    expect(text.ok).toBe(false);
    expect(!text.ok && text.error.message.startsWith("invalid registry: not JSON:")).toBe(true);
  });

  it("names the offending path of every error", () => {
    const doc = {
      apiVersion: REGISTRY_API_VERSION,
      apps: [
        { name: "ok", hostnames: ["ok.example"], secretRef: { name: "s", key: "k" } },
        { name: "Bad_Name", hostnames: ["a.example"], secretRef: { name: "s", key: "k" } },
        { name: "c", hostnames: [], secretRef: { name: "s", key: "k" } },
        { name: "d", hostnames: ["d.example:8443"], secretRef: { name: "s", key: "bad key" } },
        { name: "ok", hostnames: ["e.example"], secretRef: { name: "s", key: "k" } },
        { name: "f", hostnames: ["f.example"], secretRef: { name: "s" }, upstream: 3 },
      ],
    };
    const parsed = parseRegistry(bytes(doc), opts);
    expect(parsed.ok ? [] : parsed.error.issues).toEqual([
      "apps[1].name: must be a DNS-1123 label (lower-case letters, digits, '-')",
      "apps[2].hostnames: at least one hostname is required",
      "apps[3].hostnames[0]: port not allowed",
      "apps[3].secretRef.key: must consist of alphanumerics, '-', '_' or '.'",
      "apps[5].secretRef.key: Invalid input: expected string, received undefined",
      "apps[5].upstream: Invalid input: expected string, received number",
    ]);
  });

  it("reports duplicate App names once the apps are otherwise valid", () => {
    const doc = registryDoc([
      { name: "a", hostnames: ["a.example"] },
      { name: "a", hostnames: ["b.example"] },
    ]);
    const parsed = parseRegistry(bytes(doc), opts);
    expect(parsed.ok ? [] : parsed.error.issues).toEqual([
      "apps[1].name: duplicate App name 'a' (first at apps[0])",
    ]);
  });

  it("refuses a wrong apiVersion and a missing apps list", () => {
    const parsed = parseRegistry(bytes({ apiVersion: "v2" }), opts);
    expect(parsed.ok ? [] : parsed.error.issues).toEqual([
      'apiVersion: must be "replica-mirror/v1"',
      "apps: Invalid input: expected array, received undefined",
    ]);
  });

  it("never throws on hostile input", () => {
    for (const value of [
      "null",
      "[]",
      '"x"',
      "1e999",
      '{"apps":null}',
      '{"__proto__":{"x":1}}',
      "",
    ]) {
      expect(parseRegistry(Buffer.from(value), opts).ok).toBe(false);
    }
  });

  it("returns a deeply frozen Registry", () => {
    const parsed = parseRegistry(
      bytes(registryDoc([{ name: "a", hostnames: ["a.example"] }])),
      opts,
    );
    if (!parsed.ok) throw new Error(parsed.error.message);
    expect(Object.isFrozen(parsed.value.apps)).toBe(true);
    expect(Object.isFrozen(parsed.value.apps[0])).toBe(true);
    expect(Object.isFrozen(parsed.value.apps[0]?.hostnames)).toBe(true);
    expect(Object.isFrozen(parsed.value.apps[0]?.secretRef)).toBe(true);
  });
});
