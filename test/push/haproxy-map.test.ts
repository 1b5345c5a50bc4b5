import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  entryCount,
  mapPayloads,
  parseHeldRevision,
  payloads,
} from "../../src/push/haproxy-map.ts";
import { type LineFormat, tableLines } from "../../src/push/table-lines.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import { meta, registryOf, secretData, secretsOf, snapshotOf } from "../support/world.ts";

describe("the HAProxy map of a table", () => {
  it("holds each hostname, each wildcard under its marked key (the revision is in the overlay), an App's credential flagged only", () => {
    const apps = [
      {
        name: "ip",
        hostnames: ["ip.example.com", "*.ip.example.com"],
        upstream: "http://10.0.0.1:81",
        credential: { prefix: "Bearer " },
      },
      { name: "dns", hostnames: ["dns.example.com"], upstream: "http://dns.svc/" },
      { name: "none", hostnames: ["none.example.com"], upstream: "https://none.svc" },
      { name: "off", hostnames: ["off.example.com"] },
      { name: "bad", hostnames: ["bad.example.com"], upstream: "http://b.svc", credential: {} },
    ];
    const secrets = secretsOf(
      Object.entries({ ip: "k|1 \t{x}", dns: "t", none: "t", bad: "x\ry" }).map(([app, token]) => [
        `apps/${app}-credentials`,
        secretData({ token }),
      ]),
    );
    const map = (serveCredentials: boolean) => {
      const snapshot = build(registryOf(apps), secrets, { ...meta(12), serveCredentials });
      const { payloads, lines } = mapPayloads(snapshot, 1_000);
      return { payloads: [...payloads].join("").split("\n"), lines };
    };
    expect([map(true), map(false)]).toEqual([
      {
        payloads: [
          "off.example.com S|off",
          "none.example.com N|none",
          "ip.example.com I|ip|10.0.0.1|81|c",
          "dns.example.com D|dns|dns.svc|80|",
          "bad.example.com U|bad",
          "ip.example.com/W I|ip|10.0.0.1|81|c",
          "",
        ],
        lines: 6,
      },
      {
        payloads: [
          "off.example.com S|off",
          "none.example.com N|none",
          "ip.example.com O|ip",
          "dns.example.com D|dns|dns.svc|80|",
          "bad.example.com O|bad",
          "ip.example.com/W O|ip",
          "",
        ],
        lines: 6,
      },
    ]);
  });

  it("splits the map into payloads of at most the given size, every line whole, none left out", () => {
    const apps = Array.from({ length: 300 }, (_, i) => ({
      name: `app-${i}`,
      hostnames: [`app-${i}.example.com`, `*.w${i}.example.com`],
      upstream: "http://10.0.0.1:80",
    }));
    const secrets = Object.fromEntries(apps.map((a) => [`${a.name}-credentials`, { token: "t" }]));
    const snapshot = snapshotOf(apps, secrets, 3);
    const [whole] = [...mapPayloads(snapshot, 1 << 20).payloads];
    const split = mapPayloads(snapshot, 500);
    const parts = [...split.payloads];
    expect({
      lines: split.lines,
      largest: Math.max(...parts.map((p) => p.length)) <= 500,
      wholeLines: parts.every((p) => p.endsWith("\n")),
      sameText: parts.join(""),
    }).toEqual({ lines: 600, largest: true, wholeLines: true, sameText: whole });
    expect(whole!.split("\n").length - 1).toBe(600);
  });

  it("renders only the changed App's chunk again after a Secret change", () => {
    const apps = Array.from({ length: 200 }, (_, i) => ({
      name: `app-${String(i).padStart(3, "0")}`,
      hostnames: [`app-${i}.example.com`],
    }));
    const before = snapshotOf(apps, {}, 1);
    const secrets = secretsOf([["apps/app-150-credentials", secretData({ token: "t" })]]);
    const after = rebuildForSecrets(
      before,
      [{ namespace: "apps", name: "app-150-credentials" }],
      secrets,
      meta(2),
    );
    const format: LineFormat = (_, name, entry) => `${name} ${entry.kind}`;
    const [old, next] = [tableLines(before, format), tableLines(after, format)];
    expect(next.map((lines, c) => lines === old[c])).toEqual([true, true, false, true]);
    expect(next[2]!.filter((l) => l.endsWith(" routed"))).toEqual(["app-150.example.com routed"]);
  });

  it("groups pieces into payloads of at most the given size, in order, cutting a long piece at lines", () => {
    const pieces = ["a 1\n", "bb 22\n", "ccc 333\n", "d 4\n"];
    expect([...payloads(pieces, 12)]).toEqual(["a 1\nbb 22\n", "ccc 333\nd 4\n"]);
    expect([...payloads(pieces, 1)]).toEqual(pieces);
    expect([...payloads(["a 1\nbb 22\nccc 333\n", "d 4\n"], 10)]).toEqual([
      "a 1\nbb 22\n",
      "ccc 333\n",
      "d 4\n",
    ]);
    expect([...payloads([], 100)]).toEqual([]);
  });

  it("reads the held revision from get map's answer", () => {
    const found =
      'type=str, case=sensitive, found=yes, idx=tree, key="REVISION", value="42", type="str"\n\n';
    const missing = "type=str, case=sensitive, found=no\n\n";
    expect([found, missing, "Unknown map identifier.\n"].map(parseHeldRevision)).toEqual([
      42,
      null,
      undefined,
    ]);
  });
});

describe("the entries of a map, from show map", () => {
  const answer = `# id (file) description
0 (/etc/haproxy/other.map) pattern loaded from file '/etc/haproxy/other.map' used by map at file 'h.cfg' line 9. curr_ver=0 next_ver=0 entry_cnt=7
1 (/etc/haproxy/m.map) pattern loaded from file '/etc/haproxy/m.map' used by map at file 'h.cfg' line 10. curr_ver=3 next_ver=4 entry_cnt=11003
`;

  it("reads the named map's count, every version's entries", () => {
    expect([
      entryCount(answer, "/etc/haproxy/m.map"),
      entryCount(answer, "/etc/haproxy/other.map"),
    ]).toEqual([11003, 7]);
  });

  it("is undefined for a map HAProxy does not list", () => {
    expect(entryCount(answer, "/etc/haproxy/none.map")).toBeUndefined();
  });
});

describe("the zero-hop haproxy.cfg", () => {
  it("walks every wildcard depth a 253-character name can have, one label per step", () => {
    const cfg = readFileSync("manifests/data-planes/haproxy/zero-hop/haproxy.cfg", "utf8");
    const steps = [...cfg.matchAll(/field\((\d+),\.,0\),concat\(\/W\)/g)].map((m) => Number(m[1]));
    const exhausted = [
      ...cfg.matchAll(/var\(txn\.mirror_host\),field\((\d+),\.\) -m len gt 0/g),
    ].map((m) => Number(m[1]));
    const range = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect({ steps, exhausted }).toEqual({ steps: range(2, 127), exhausted: range(2, 127) });
  });
});
