import { describe, expect, it } from "vitest";
import { caddyTable, parseCaddyRevision } from "../../src/push/caddy-routes.ts";
import { nginxTableBody } from "../../src/push/nginx-table.ts";
import { routingTable } from "../../src/push/table.ts";
import { snapshotOf } from "../support/world.ts";

const snapshot = snapshotOf(
  [
    {
      name: "c",
      hostnames: ["c.example.com", "*.x.c.example.com"],
      upstream: "http://10.0.0.3:8080",
    },
    { name: "a", hostnames: ["a.example.com", "*.example.com"], upstream: "http://a.svc/" },
    { name: "b", hostnames: ["b.example.com"] },
  ],
  { "a-credentials": { token: "t" }, "c-credentials": { token: "t" } },
  9,
);
const A = "R|a|9|a.svc:80|http://a.svc/";
const C = "R|c|9|10.0.0.3:8080|http://10.0.0.3:8080";

describe("the Caddy routes of a table", () => {
  it("groups exact names in sorted order, and tries wildcard depths deepest first", () => {
    const map = (source: string, destination: string, mappings: [string, string][]) => ({
      handler: "map",
      source,
      destinations: [destination],
      mappings: mappings.map(([input, output]) => ({ input, outputs: [output] })),
    });
    const label = (i: number) => `{http.request.host.labels.${i}}`;
    const badHost = {
      handler: "static_response",
      status_code: 400,
      headers: { "X-Mirror-Reason": ["bad-host"] },
    };
    const group = "replica_mirror_exact";
    expect(caddyTable(routingTable(snapshot), 2)).toEqual({
      "@id": "replica_mirror_table",
      handle: [
        { "@id": "replica_mirror_revision", handler: "vars", mirror_revision: "9" },
        {
          handler: "subroute",
          routes: [
            { match: [{ vars: { mirror_bad: ["1"] } }], handle: [badHost] },
            {
              match: [{ host: ["a.example.com", "b.example.com"] }],
              handle: [
                map("{http.request.host}", "{mirror_exact}", [
                  ["a.example.com", A],
                  ["b.example.com", "S|b"],
                ]),
                { handler: "vars", mirror_entry: "{mirror_exact}" },
              ],
              group,
            },
            {
              match: [{ host: ["c.example.com"] }],
              handle: [
                map("{http.request.host}", "{mirror_exact}", [["c.example.com", C]]),
                { handler: "vars", mirror_entry: "{mirror_exact}" },
              ],
              group,
            },
            {
              match: [
                { vars_regexp: { "{http.request.host}": { name: "long", pattern: "^.{254,}$" } } },
              ],
              handle: [badHost],
              group,
            },
            {
              match: [{ vars: { mirror_entry: [""] }, not: [{ vars: { [label(4)]: [""] } }] }],
              handle: [
                map(`${label(3)}.${label(2)}.${label(1)}.${label(0)}`, "{mirror_wild_4}", [
                  ["x.c.example.com", C],
                ]),
                { handler: "vars", mirror_entry: "{mirror_wild_4}" },
              ],
            },
            {
              match: [{ vars: { mirror_entry: [""] }, not: [{ vars: { [label(2)]: [""] } }] }],
              handle: [
                map(`${label(1)}.${label(0)}`, "{mirror_wild_2}", [["example.com", A]]),
                { handler: "vars", mirror_entry: "{mirror_wild_2}" },
              ],
            },
          ],
        },
      ],
    });
  });

  it("reads the revision back from the revision handler, and nothing else", () => {
    expect(
      [
        { "@id": "replica_mirror_revision", handler: "vars", mirror_revision: "12" },
        { mirror_revision: 12 },
        null,
      ].map(parseCaddyRevision),
    ).toEqual([12, undefined, undefined]);
  });
});

describe("the nginx table body", () => {
  it("starts with the revision, then one line per hostname and wildcard suffix, in the index's order", () => {
    expect(nginxTableBody(routingTable(snapshot))).toBe(
      [
        "revision 9",
        "= c.example.com I|c|9|10.0.0.3|8080|http://10.0.0.3:8080",
        "= b.example.com S|b",
        "= a.example.com D|a|9|a.svc|80|http://a.svc/",
        "* x.c.example.com I|c|9|10.0.0.3|8080|http://10.0.0.3:8080",
        "* example.com D|a|9|a.svc|80|http://a.svc/",
        "",
      ].join("\n"),
    );
  });
});
