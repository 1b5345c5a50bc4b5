import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  normaliseAnyHostname,
  normaliseHostname,
  normaliseRequestHost,
} from "../../src/registry/hostname.ts";

describe("normaliseHostname (Registry document)", () => {
  it.each([
    ["SHOP.Example.COM.", { pattern: "shop.example.com", wildcardSuffix: null }],
    ["bücher.example", { pattern: "xn--bcher-kva.example", wildcardSuffix: null }],
    ["*.Shop.example.com", { pattern: "*.shop.example.com", wildcardSuffix: "shop.example.com" }],
    [
      "*.bücher.example.",
      { pattern: "*.xn--bcher-kva.example", wildcardSuffix: "xn--bcher-kva.example" },
    ],
    ["localhost", { pattern: "localhost", wildcardSuffix: null }],
  ])("normalises %s", (raw, expected) => {
    expect(normaliseHostname(raw)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ["", "must not be empty"],
    ["shop.example.com:8443", "port not allowed"],
    ["[::1]:80", "IP literals and ports are not allowed"],
    ["[::1]", "IP literals and ports are not allowed"],
    ["a..b", "empty label"],
    [".a.b", "empty label"],
    ["a.b..", "empty label"],
    ["*", "a wildcard must be the whole leading label, as in *.example.com"],
    ["*.", "a wildcard must be the whole leading label, as in *.example.com"],
    ["a.*.com", "a wildcard must be the whole leading label, as in *.example.com"],
    ["*a.com", "a wildcard must be the whole leading label, as in *.example.com"],
    ["*.*.com", "a wildcard must be the whole leading label, as in *.example.com"],
    ["ex%41mple.com", "invalid character '%'"],
    ["a b.com", "invalid label 'a b': lower-case letters, digits and '-' only, not at either end"],
    ["-a.com", "invalid label '-a': lower-case letters, digits and '-' only, not at either end"],
    ["a_b.com", "invalid label 'a_b': lower-case letters, digits and '-' only, not at either end"],
    [`${"a".repeat(64)}.com`, "label longer than 63 characters"],
    [Array.from({ length: 60 }, () => "abcd").join("."), "must be at most 253 characters"],
  ])("refuses %j", (raw, message) => {
    expect(normaliseHostname(raw)).toEqual({ ok: false, error: message });
  });

  it("allows exactly 253 characters", () => {
    const host = `${Array.from({ length: 50 }, () => "abcd").join(".")}.${"a".repeat(3)}`;
    expect(host.length).toBe(253);
    expect(normaliseHostname(host).ok).toBe(true);
  });
});

describe("normaliseRequestHost (a data plane's Host)", () => {
  it.each([
    ["shop.example.com", "shop.example.com"],
    ["SHOP.Example.COM.", "shop.example.com"],
    ["shop.example.com:8443", "shop.example.com"],
    ["Shop.Example.com.:80", "shop.example.com"],
    ["bücher.example", "xn--bcher-kva.example"],
    ["10.0.0.1:8080", "10.0.0.1"],
    ["under_score.example", "under_score.example"],
  ])("normalises %j to %j", (raw, host) => {
    expect(normaliseRequestHost(raw)).toEqual({ ok: true, value: host });
  });

  it.each([
    ["", "empty"],
    ["[::1]:80", "ip-literal"],
    ["[::1]", "ip-literal"],
    ["a".repeat(300), "too-long"],
    ["shop.example.com:", "invalid"],
    ["shop.example.com:80:80", "invalid"],
    ["shop.example.com:http", "invalid"],
    ["a..b", "invalid"],
    [".", "invalid"],
    ["a b", "invalid"],
    ["ex%41mple.com", "invalid"],
    ["shop.example.com, other.example.com", "invalid"],
  ])("refuses %j as %s", (raw, reason) => {
    expect(normaliseRequestHost(raw)).toEqual({ ok: false, error: reason });
  });
});

describe("normaliseHostname's shortcut for plain names", () => {
  // Names from characters that reach every rule: case, dots, wildcards, ports, IDN, '%', '_'.
  const name = fc
    .array(
      fc.constantFrom(
        "a",
        "z",
        "0",
        "9",
        "-",
        ".",
        "*",
        "*.",
        "A",
        "_",
        ":",
        "ü",
        "%",
        "a".repeat(63),
      ),
      {
        maxLength: 12,
      },
    )
    .map((parts) => parts.join(""));

  it("gives the full rules' answer for every name", () => {
    fc.assert(
      fc.property(name, (raw) => {
        expect(normaliseHostname(raw)).toEqual(normaliseAnyHostname(raw));
      }),
      { numRuns: 5000 },
    );
  });

  it("takes plain names, wildcards and 253-character names whole", () => {
    const long = `${Array.from({ length: 3 }, () => "a".repeat(63)).join(".")}.${"b".repeat(61)}`;
    for (const raw of ["shop.example.com", "*.shop.example.com", "a-1.b", long])
      expect(normaliseHostname(raw)).toEqual({
        ok: true,
        value: { pattern: raw, wildcardSuffix: raw.startsWith("*.") ? raw.slice(2) : null },
      });
    expect(long.length).toBe(253);
  });
});
