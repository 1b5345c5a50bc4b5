import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { entryCount, mapLines, parseHeldRevision, payloads } from "../../src/push/haproxy-map.ts";
import { routingTable } from "../../src/push/table.ts";
import { snapshotOf } from "../support/world.ts";

describe("the HAProxy map of a table", () => {
  it("holds each hostname, each wildcard under its marked key, and the revision, in the index's order", () => {
    const snapshot = snapshotOf(
      [
        {
          name: "ip",
          hostnames: ["ip.example.com", "*.ip.example.com"],
          upstream: "http://10.0.0.1:81",
        },
        { name: "dns", hostnames: ["dns.example.com"], upstream: "http://dns.svc/" },
        { name: "none", hostnames: ["none.example.com"], upstream: "https://none.svc" },
        { name: "off", hostnames: ["off.example.com"] },
      ],
      {
        "ip-credentials": { token: "t" },
        "dns-credentials": { token: "t" },
        "none-credentials": { token: "t" },
      },
      12,
    );
    expect(mapLines(routingTable(snapshot))).toEqual([
      "off.example.com S|off",
      "none.example.com N|none|12",
      "ip.example.com I|ip|12|10.0.0.1|81",
      "dns.example.com D|dns|12|dns.svc|80",
      "ip.example.com/W I|ip|12|10.0.0.1|81",
      "REVISION 12",
    ]);
  });

  it("groups lines into payloads of at most the given size, in order", () => {
    const lines = ["a 1", "bb 22", "ccc 333", "d 4"];
    expect(payloads(lines, 12)).toEqual(["a 1\nbb 22\n", "ccc 333\nd 4\n"]);
    expect(payloads(lines, 1)).toEqual(["a 1\n", "bb 22\n", "ccc 333\n", "d 4\n"]);
    expect(payloads([], 100)).toEqual([]);
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
