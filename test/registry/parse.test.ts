import { createHash } from "node:crypto";
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
        registry: {
          apps: [
            { ...SHOP_DECLARED, secretRef: { ...SHOP_DECLARED.secretRef, namespace: "platform" } },
            {
              name: "blog",
              hostnames: ["blog.example.com"],
              secretRef: { namespace: "b", name: "blog", key: "t.k_-1" },
              upstream: null,
              credential: null,
              tls: null,
            },
          ],
        },
        refused: [],
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
    // How long it is and, when V8 says, where it broke; never what it held (V8's message quotes it).
    expect(parseRegistry(Buffer.from('{"apps": [nope-secret'), opts)).toEqual({
      ok: false,
      error: {
        message: "invalid registry: the value of 21 bytes is not valid JSON",
        issues: ["the value of 21 bytes is not valid JSON"],
      },
    });
    expect(parseRegistry(Buffer.from('{"apps" []}'), opts)).toEqual({
      ok: false,
      error: {
        message: "invalid registry: the value of 11 bytes is not valid JSON at position 8",
        issues: ["the value of 11 bytes is not valid JSON at position 8"],
      },
    });
  });

  it("refuses each invalid App entry alone, naming the offending path inside it", () => {
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
    expect(parsed.ok && parsed.value.registry.apps.map((a) => a.name)).toEqual(["ok"]);
    expect(parsed.ok && parsed.value.refused).toEqual([
      {
        index: 1,
        name: "Bad_Name",
        reason: "name: must be a DNS-1123 label (lower-case letters, digits, '-')",
      },
      { index: 2, name: "c", reason: "hostnames: at least one hostname is required" },
      {
        index: 3,
        name: "d",
        reason:
          "hostnames[0]: port not allowed; secretRef.key: must consist of alphanumerics, '-', '_' or '.'",
      },
      { index: 4, name: "ok", reason: "name: taken by apps[0]" },
      {
        index: 5,
        name: "f",
        reason:
          "secretRef.key: Invalid input: expected string, received undefined; upstream: Invalid input: expected string, received number",
      },
    ]);
  });

  it("refuses an App over a cap: too many hostnames, too long an upstream", () => {
    const doc = registryDoc([
      { name: "a", hostnames: Array.from({ length: 101 }, (_, i) => `h${i}.example`) },
      { name: "b", hostnames: ["b.example"], upstream: `http://${"u".repeat(2_048)}` },
      { name: "c", hostnames: ["c.example"], upstream: `http://${"u".repeat(2_000)}` },
    ]);
    const parsed = parseRegistry(bytes(doc), opts);
    expect(parsed.ok && parsed.value.refused).toEqual([
      { index: 0, name: "a", reason: "hostnames: at most 100 hostnames" },
      { index: 1, name: "b", reason: "upstream: at most 2048 characters" },
    ]);
    expect(parsed.ok && parsed.value.registry.apps.map((a) => a.name)).toEqual(["c"]);
  });

  it("refuses each App whose upstream is a local address alone, naming the rule, unless allowed", () => {
    const doc = registryDoc([
      { name: "ops", hostnames: ["ops.example"], upstream: "http://127.0.0.1:9090" },
      { name: "short", hostnames: ["short.example"], upstream: "http://127.1:9090" },
      { name: "named", hostnames: ["named.example"], upstream: "http://localhost:8001" },
      { name: "any", hostnames: ["any.example"], upstream: "http://0.0.0.0:2019" },
      { name: "cloud", hostnames: ["cloud.example"], upstream: "http://169.254.169.254" },
      { name: "mapped", hostnames: ["mapped.example"], upstream: "http://[::ffff:127.0.0.1]" },
      { name: "private", hostnames: ["private.example"], upstream: "http://10.0.0.12:8080" },
    ]);
    const loopback = "upstream: a loopback address is not allowed (--allow-local-upstreams)";
    const refused = parseRegistry(bytes(doc), opts);
    expect(refused.ok && refused.value).toEqual({
      registry: {
        apps: [
          {
            name: "private",
            hostnames: ["private.example"],
            secretRef: { namespace: "platform", name: "private-credentials", key: "token" },
            upstream: "http://10.0.0.12:8080",
            credential: null,
            tls: null,
          },
        ],
      },
      refused: [
        { index: 0, name: "ops", reason: loopback },
        { index: 1, name: "short", reason: loopback },
        { index: 2, name: "named", reason: loopback },
        {
          index: 3,
          name: "any",
          reason:
            "upstream: an unspecified address (0.0.0.0/8, ::) is not allowed (--allow-local-upstreams)",
        },
        {
          index: 4,
          name: "cloud",
          reason:
            "upstream: a link-local address (169.254.0.0/16, fe80::/10) is not allowed (--allow-local-upstreams)",
        },
        { index: 5, name: "mapped", reason: loopback },
      ],
    });
    const allowed = parseRegistry(bytes(doc), { ...opts, allowLocalUpstreams: true });
    expect(allowed.ok && allowed.value.registry.apps.map((a) => [a.name, a.upstream])).toEqual(
      doc.apps.map((a) => [a.name, a.upstream]),
    );
    expect(allowed.ok && allowed.value.refused).toEqual([]);
  });

  it("refuses each App with a hostname that is an IPv4 address, under localhost, or a one-label wildcard", () => {
    const doc = registryDoc([
      { name: "ip", hostnames: ["ok.example", "10.0.0.12"] },
      { name: "short", hostnames: ["127.1"] },
      { name: "wild-ip", hostnames: ["*.0.0.12"] },
      { name: "local", hostnames: ["app.localhost"] },
      { name: "tld", hostnames: ["*.com"] },
      { name: "fine", hostnames: ["10-0-0-12.example", "*.example.com"] },
    ]);
    const parsed = parseRegistry(bytes(doc), opts);
    const number =
      "its last label is a number, so URL parsers read it as an IPv4 address: not a hostname";
    expect(parsed.ok && parsed.value.refused).toEqual([
      { index: 0, name: "ip", reason: `hostnames[1]: ${number}` },
      { index: 1, name: "short", reason: `hostnames[0]: ${number}` },
      { index: 2, name: "wild-ip", reason: `hostnames[0]: ${number}` },
      {
        index: 3,
        name: "local",
        reason: "hostnames[0]: localhost and the names under it are not allowed",
      },
      {
        index: 4,
        name: "tld",
        reason: "hostnames[0]: a wildcard must cover at least two labels, as in *.example.com",
      },
    ]);
    expect(parsed.ok && parsed.value.registry.apps.map((a) => a.name)).toEqual(["fine"]);
  });

  it("repeats at most 64 characters of a refused name and a digest of the rest, and never the input in a reason", () => {
    const long = "n".repeat(20 * 1024 * 1024);
    const mid = "m".repeat(1024 * 1024);
    const doc = {
      apiVersion: REGISTRY_API_VERSION,
      apps: [
        { name: long, hostnames: ["a.example"], secretRef: { name: "s", key: "k" } },
        { name: `${mid}!`, hostnames: [mid], secretRef: { name: mid, key: mid }, upstream: mid },
        { name: mid, hostnames: 1, secretRef: { name: "s", key: "k" } },
      ],
    };
    const value = gzipSync(bytes(doc));
    expect(value.length).toBeLessThan(64 * 1024);
    const parsed = parseRegistry(value, opts);
    const digest = (name: string) => createHash("sha256").update(name).digest("hex").slice(0, 8);
    expect(parsed.ok && parsed.value.refused).toEqual([
      {
        index: 0,
        name: `${"n".repeat(64)}…${digest(long)}`,
        reason: "name: must be at most 63 characters",
      },
      {
        index: 1,
        name: `${"m".repeat(64)}…${digest(`${mid}!`)}`,
        reason:
          "name: must be at most 63 characters; upstream: at most 2048 characters; hostnames[0]: label longer than 63 characters; secretRef.name: must be at most 253 characters; secretRef.key: must be at most 253 characters",
      },
      {
        index: 2,
        name: `${"m".repeat(64)}…${digest(mid)}`,
        reason: "hostnames: Invalid input: expected array, received number",
      },
    ]);
  });

  it("refuses a Registry of more than 250,000 Apps whole", () => {
    const apps = Array.from({ length: 250_001 }, () => ({}));
    const parsed = parseRegistry(bytes({ apiVersion: REGISTRY_API_VERSION, apps }), opts);
    expect(parsed.ok ? [] : parsed.error.issues).toEqual(["apps: at most 250000 Apps"]);
  });

  it("refuses a later entry of a name an earlier valid entry took", () => {
    const doc = registryDoc([
      { name: "a", hostnames: ["a.example"] },
      { name: "a", hostnames: ["b.example"] },
    ]);
    const parsed = parseRegistry(bytes(doc), opts);
    expect(parsed.ok && parsed.value.refused).toEqual([
      { index: 1, name: "a", reason: "name: taken by apps[0]" },
    ]);
    expect(parsed.ok && parsed.value.registry.apps[0]?.hostnames).toEqual(["a.example"]);
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
    const { apps } = parsed.value.registry;
    expect(Object.isFrozen(apps)).toBe(true);
    expect(Object.isFrozen(apps[0])).toBe(true);
    expect(Object.isFrozen(apps[0]?.hostnames)).toBe(true);
    expect(Object.isFrozen(apps[0]?.secretRef)).toBe(true);
  });
});
