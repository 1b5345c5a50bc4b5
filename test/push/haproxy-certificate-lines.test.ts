// What HAProxy should hold for a view's certificates (haproxy-certificates.ts), and how its
// answers are read back: pure, no HAProxy.

import { beforeAll, describe, expect, it } from "vitest";
import {
  certificatesDigest,
  crtListLines,
  filterGroups,
  parseCrtList,
  parseFingerprints,
  parseStore,
} from "../../src/push/haproxy-certificates.ts";
import { batched } from "../../src/push/haproxy-commands.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import { makeCertificate, type TestCertificate } from "../support/certificates.ts";
import { fingerprintOf } from "../support/tls-client.ts";
import { servedSnapshot, tlsApp } from "./haproxy-certificates-world.ts";

const LIST = "/etc/h/list.crt-list";
let a: TestCertificate;
let big: TestCertificate;

beforeAll(() => {
  a = makeCertificate({ names: ["a.example.com", "*.a.example.com"] });
  // A chain whose `set ssl cert` would not fit HAProxy's 16 kB buffer (refused as too-large).
  const many = Array.from({ length: 600 }, (_, i) => `n${i}-${"x".repeat(30)}.example.com`);
  big = makeCertificate({ names: ["big.example.com", ...many] });
});

describe("crtListLines", () => {
  it("names each App's certificate by App, id and names beside the crt-list, filters its names", () => {
    const view = servedSnapshot(
      [
        tlsApp("a", ["a.example.com", "*.a.example.com"], "http://a:80"),
        tlsApp("big", ["big.example.com"], "http://b:80"),
      ],
      { a: { cert: a, version: "1" }, big: { cert: big, version: "1" } },
      1,
    );
    const id = findApp(view, "a")!.certificate!.served!.id;
    const lines = crtListLines(LIST)(view);
    // big's is too large for one `set ssl cert`: the check refuses it, HAProxy gets no line.
    expect(findApp(view, "big")!.certificate!.refusal).toEqual({ rule: "too-large" });
    expect(lines.map((l) => l.line)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^/etc/h/replica-mirror/a\\.${id}\\.[0-9a-f]{8}\\.pem \\*\\.a\\.example\\.com a\\.example\\.com$`,
        ),
      ),
    ]);
    expect(lines[0]!.name).toBe(lines[0]!.line.split(" ")[0]);
    // The same view, the same list: kept.
    expect(crtListLines(LIST)(view)).toEqual(lines);
  });

  it("splits names into groups of at most 8,000 bytes of filters", () => {
    const names = Array.from({ length: 100 }, (_, i) => `${"h".repeat(90)}${i}.example.com`);
    const groups = filterGroups(names);
    expect({
      sizes: groups.map((g) => g.length),
      fit: groups.every((g) => g.join(" ").length <= 8_000),
      all: groups.flat(),
    }).toEqual({ sizes: [76, 24], fit: true, all: names });
  });
});

describe("reading HAProxy's answers", () => {
  const prefix = "/etc/h/replica-mirror/";

  it("takes the sidecar's lines of a crt-list, and nothing from an answer that is not one", () => {
    const shown = `# ${LIST}\n/etc/h/default.pem\n${prefix}a.1.2.pem a.example.com\n/own.pem x.example.com\n`;
    expect([parseCrtList(shown, prefix), parseCrtList("Unknown command", prefix)]).toEqual([
      [`${prefix}a.1.2.pem a.example.com`],
      undefined,
    ]);
  });

  it("lists the store's names under the prefix and an open transaction", () => {
    const shown = `# transaction\n*${prefix}b.pem\n# filename\n/etc/h/default.pem\n${prefix}a.pem\n${prefix}b.pem\n`;
    expect(parseStore(shown, prefix)).toEqual({
      names: [`${prefix}a.pem`, `${prefix}b.pem`],
      transaction: `${prefix}b.pem`,
    });
  });

  it("reads each certificate's fingerprint from answers joined by `;`", () => {
    const one = (name: string, print: string) =>
      `Filename: ${name}\nStatus: Used\nSerial: 01\nSHA1 FingerPrint: ${print}\nSubject: /CN=x\n\n`;
    expect(parseFingerprints(`${one("/a.pem", "AA")}${one("/b.pem", "BB")}`)).toEqual(
      new Map([
        ["/a.pem", "AA"],
        ["/b.pem", "BB"],
      ]),
    );
  });

  it("batches commands into lines that fit", () => {
    const names = Array.from({ length: 5 }, (_, i) => `/n${i}`);
    expect(batched("show ssl cert", names, 40)).toEqual([
      "show ssl cert /n0;show ssl cert /n1",
      "show ssl cert /n2;show ssl cert /n3",
      "show ssl cert /n4",
    ]);
  });

  it("digests lines and fingerprints whatever their order; none is the empty digest", () => {
    const x = { line: "/x a.example.com", fingerprint: fingerprintOf(a.crt) };
    const y = { line: "/y b.example.com", fingerprint: "00" };
    expect([
      certificatesDigest([x, y]) === certificatesDigest([y, x]),
      certificatesDigest([]),
    ]).toEqual([true, ""]);
  });
});
