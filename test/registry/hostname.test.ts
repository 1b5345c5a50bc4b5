import { domainToASCII } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normaliseHostname, normaliseRequestHost } from "../../src/registry/hostname.ts";

const NUMBER =
  "its last label is a number, so URL parsers read it as an IPv4 address: not a hostname";
const LOCALHOST = "localhost and the names under it are not allowed";
const WIDE = "a wildcard must cover at least two labels, as in *.example.com";

describe("normaliseHostname (Registry document)", () => {
  it.each([
    ["SHOP.Example.COM.", "shop.example.com"],
    ["bücher.example", "xn--bcher-kva.example"],
    ["*.Shop.example.com", "*.shop.example.com"],
    ["*.bücher.example.", "*.xn--bcher-kva.example"],
    ["localhost.example.com", "localhost.example.com"],
    ["a.b0", "a.b0"],
    ["a.0xg", "a.0xg"],
    ["10.0.0.12.example", "10.0.0.12.example"],
    ["*.a.b", "*.a.b"],
    ["shop", "shop"],
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
    ["a b.com", "label 1 is not valid: lower-case letters, digits and '-' only, not at either end"],
    ["-a.com", "label 1 is not valid: lower-case letters, digits and '-' only, not at either end"],
    ["a_b.com", "label 1 is not valid: lower-case letters, digits and '-' only, not at either end"],
    [
      "shop.a_b.com",
      "label 2 is not valid: lower-case letters, digits and '-' only, not at either end",
    ],
    [
      "*.shop.-b.com",
      "label 2 is not valid: lower-case letters, digits and '-' only, not at either end",
    ],
    [`${"a".repeat(64)}.com`, "label longer than 63 characters"],
    [Array.from({ length: 60 }, () => "abcd").join("."), "must be at most 253 characters"],
    ["10.0.0.12", NUMBER],
    ["10.0.0.12.", NUMBER],
    ["127.1", NUMBER],
    ["2130706433", NUMBER],
    ["0x7f.1", NUMBER],
    ["shop.0X7F", NUMBER],
    ["a.0x", NUMBER],
    ["*.0.0.12", NUMBER],
    ["localhost", LOCALHOST],
    ["LocalHost.", LOCALHOST],
    ["api.localhost", LOCALHOST],
    ["*.localhost", LOCALHOST],
    ["*.com", WIDE],
    ["*.Shop.", WIDE],
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
    ["10.0.0.1.example:8080", "10.0.0.1.example"],
    ["under_score.example", "under_score.example"],
    ["localhost:8000", "localhost"],
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
    ["10.0.0.12:8000", "ip-literal"],
    ["10.0.0.12.", "ip-literal"],
    ["127.1", "ip-literal"],
    ["2130706433", "ip-literal"],
    ["SHOP.0X1F:80", "ip-literal"],
    ["x.0x", "ip-literal"],
  ])("refuses %j as %s", (raw, reason) => {
    expect(normaliseRequestHost(raw)).toEqual({ ok: false, error: reason });
  });
});

// The rules stated plainly, with regular expressions and splits: what the one-pass scanner of
// hostname.ts must agree with for every name.
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
function referenceAscii(host: string): string | null {
  if (host.includes("%")) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is for any non-ASCII byte
  if (/^[\x00-\x7f]*$/.test(host)) return host.toLowerCase();
  const ascii = domainToASCII(host);
  return ascii === "" ? null : ascii;
}
function referenceDeclared(raw: string): string | null {
  if (raw.length === 0) return null;
  let host = raw.endsWith(".") ? raw.slice(0, -1) : raw;
  if (host.includes("[") || host.includes(":")) return null;
  const wildcard = host.startsWith("*.");
  if (wildcard) host = host.slice(2);
  if (host.includes("*")) return null;
  const ascii = referenceAscii(host);
  if (ascii === null || ascii === "") return null;
  if (!ascii.split(".").every((l) => l.length <= 63 && LABEL.test(l))) return null;
  const pattern = wildcard ? `*.${ascii}` : ascii;
  if (pattern.length > 253 || endsInNumber(ascii)) return null;
  if (ascii === "localhost" || ascii.endsWith(".localhost")) return null;
  return wildcard && !ascii.includes(".") ? null : pattern;
}
/** WHATWG's "ends in a number": the last label is decimal digits, or 0x and hex digits. */
function endsInNumber(host: string): boolean {
  return /^(?:[0-9]+|0x[0-9a-f]*)$/.test(host.slice(host.lastIndexOf(".") + 1));
}
function referenceRequest(raw: string): string | null {
  if (raw.length === 0 || raw.length > 260 || raw.startsWith("[")) return null;
  let host = raw;
  const colon = host.lastIndexOf(":");
  if (colon !== -1) {
    if (!/^\d{1,5}$/.test(host.slice(colon + 1)) || host.indexOf(":") !== colon) return null;
    host = host.slice(0, colon);
  }
  if (host.endsWith(".")) host = host.slice(0, -1);
  const ascii = referenceAscii(host);
  if (ascii === null || ascii === "" || ascii.length > 253) return null;
  return ascii.split(".").every((l) => l.length > 0 && l.length <= 63 && /^[a-z0-9_-]+$/.test(l)) &&
    !endsInNumber(ascii)
    ? ascii
    : null;
}

describe("the hostname rules, against a plain statement of them", () => {
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
        ":80",
        "ü",
        "%",
        "a".repeat(63),
        "0x",
        "1",
        "f",
        "localhost",
      ),
      {
        maxLength: 12,
      },
    )
    .map((parts) => parts.join(""));

  it("accepts exactly the declared names the rules accept, in the same normal form", () => {
    fc.assert(
      fc.property(name, (raw) => {
        const n = normaliseHostname(raw);
        expect(n.ok ? n.value : null).toEqual(referenceDeclared(raw));
      }),
      { numRuns: 5000 },
    );
  });

  it("accepts exactly the request hosts the rules accept, in the same normal form", () => {
    fc.assert(
      fc.property(name, (raw) => {
        const n = normaliseRequestHost(raw);
        expect(n.ok ? n.value : null).toEqual(referenceRequest(raw));
      }),
      { numRuns: 5000 },
    );
  });

  it("returns plain names, wildcards and 253-character names as they are", () => {
    const long = `${Array.from({ length: 3 }, () => "a".repeat(63)).join(".")}.${"b".repeat(61)}`;
    for (const raw of ["shop.example.com", "*.shop.example.com", "a-1.b", long]) {
      const n = normaliseHostname(raw);
      expect(n).toEqual({ ok: true, value: raw });
      // The same string, not a copy: a valid Registry's hostnames cost no allocation.
      expect(n.ok && n.value).toBe(raw);
    }
    expect(long.length).toBe(253);
  });
});
