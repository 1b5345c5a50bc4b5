import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { notRouted, proxyTo, stripMirrorHeaders } from "../../src/push/caddy-answers.ts";
import { keyRoutes } from "../../src/push/caddy-key-routes.ts";
import { partitionByPrefix } from "../../src/push/caddy-partition.ts";
import { caddyRoutes, parseCaddyRevision } from "../../src/push/caddy-routes.ts";
import { routingTable, type TableEntry } from "../../src/push/table.ts";
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

/** Whether a `header` matcher value matches `value`, as Caddy reads `prefix*` and exact values. */
const matches = (pattern: string, value: string) =>
  pattern.endsWith("*") ? value.startsWith(pattern.slice(0, -1)) : value === pattern;

describe("the trie partition of table keys", () => {
  it("cuts sorted keys into runs of whole subtrees, a lone key by itself", () => {
    const keys = ["a.com", "a.com.au", "ab.com", "abc.com", "b.com", "ba.com", "c.com"];
    expect(partitionByPrefix(keys, 2, 8)).toEqual([
      { patterns: ["a.com*"], keys: ["a.com", "a.com.au"] },
      { patterns: ["ab*"], keys: ["ab.com", "abc.com"] },
      { patterns: ["b*"], keys: ["b.com", "ba.com"] },
      { patterns: ["c.com"], keys: ["c.com"] },
    ]);
    expect(partitionByPrefix(keys, 7, 8)).toEqual([{ patterns: ["*"], keys }]);
    expect(partitionByPrefix(keys, 3, 1).map((g) => g.patterns)).toEqual([
      ["a.com*"],
      ["ab*"],
      ["b*"],
      ["c.com"],
    ]);
  });

  it("gives every key exactly one group, whose patterns match no other key", () => {
    const key = fc.stringMatching(/^[a-c.~]{1,6}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(key, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        (unsorted, limit, maxPatterns) => {
          const keys = [...unsorted].sort();
          const groups = partitionByPrefix(keys, limit, maxPatterns);
          expect(groups.flatMap((g) => g.keys)).toEqual(keys);
          for (const g of groups) {
            expect(g.keys.length).toBeLessThanOrEqual(limit);
            expect(g.patterns.length).toBeLessThanOrEqual(maxPatterns);
            const matched = keys.filter((k) => g.patterns.some((p) => matches(p, k)));
            expect(matched).toEqual(g.keys);
          }
        },
      ),
    );
  });
});

describe("the key routes", () => {
  const routed = (app: string, host: string, port: number, upstream: string): TableEntry => ({
    kind: "routed",
    app,
    upstream,
    target: { host, port, literal: false },
    credential: null,
  });
  const map = (destinations: string[], mappings: [string, string[]][]) => ({
    handler: "map",
    source: "{http.request.hostport}",
    destinations,
    mappings: mappings.map(([input, outputs]) => ({ input, outputs })),
  });

  it("answers unavailable and unroutable keys by kind, and proxies each group from a map of what differs", () => {
    const entries: [string, TableEntry][] = [
      ["a.com", routed("a", "a.svc", 80, "http://a.svc/")],
      ["b.com", routed("b", "b.svc", 80, "http://b.svc:80")],
      ["c.com", { kind: "not-routed", app: "c", reason: "secret-unavailable" }],
      [
        "d.com",
        { kind: "routed", app: "d", upstream: "https://d", target: null, credential: null },
      ],
      ["e.com", routed("e", "e.svc", 8080, "http://e.svc:8080")],
      ["f.com", routed("f", "e.svc", 8080, "http://e.svc:8080")],
    ];
    const proxy = (app: string, dial: string, upstream: string) =>
      proxyTo({ app, dial, upstream, revision: "7" });
    expect(keyRoutes(entries, "7", { groupSize: 2 })).toEqual([
      {
        match: [{ host: ["c.com"] }],
        handle: [notRouted("secret-unavailable", "c")],
        terminal: true,
      },
      {
        match: [{ host: ["d.com"] }],
        handle: [
          {
            handler: "static_response",
            status_code: 502,
            headers: { "Content-Type": ["text/plain"] },
            body: "app has no http upstream",
          },
        ],
        terminal: true,
      },
      {
        match: [{ header: { Host: ["a.com", "b.com"] } }],
        handle: [
          map(
            ["{mirror_app}", "{mirror_dial}", "{mirror_upstream}"],
            [
              ["a.com", ["a", "a.svc:80", "http://a.svc/"]],
              ["b.com", ["b", "b.svc:80", "http://b.svc:80"]],
            ],
          ),
          stripMirrorHeaders,
          proxy("{mirror_app}", "{mirror_dial}", "{mirror_upstream}"),
        ],
        terminal: true,
      },
      {
        match: [{ header: { Host: ["e.com", "f.com"] } }],
        handle: [
          map(
            ["{mirror_app}"],
            [
              ["e.com", ["e"]],
              ["f.com", ["f"]],
            ],
          ),
          stripMirrorHeaders,
          proxy("{mirror_app}", "e.svc:8080", "http://e.svc:8080"),
        ],
        terminal: true,
      },
    ]);
  });

  it("takes the upstream header from the dialled address when every upstream is http:// and its dial", () => {
    const entries: [string, TableEntry][] = [
      ["a.com", routed("a", "a.svc", 80, "http://a.svc:80")],
      ["b.com", routed("a", "b.svc", 81, "http://b.svc:81")],
    ];
    expect(keyRoutes(entries, "7")).toEqual([
      {
        handle: [
          map(
            ["{mirror_dial}"],
            [
              ["a.com", ["a.svc:80"]],
              ["b.com", ["b.svc:81"]],
            ],
          ),
          stripMirrorHeaders,
          proxyTo({
            app: "a",
            dial: "{mirror_dial}",
            upstream: "http://{http.reverse_proxy.upstream.hostport}",
            revision: "7",
          }),
        ],
        terminal: true,
      },
    ]);
  });
});

describe("the Caddy routes of a table", () => {
  const routes = caddyRoutes(routingTable(snapshot)) as Record<string, unknown>[];

  it("normalises, sends every Host that is no exact name to the wildcard search, then answers exact names", () => {
    const miss = routes[1] as { match: unknown; handle: { routes: unknown[] }[] };
    expect(miss.match).toEqual([
      { not: [{ host: ["a.example.com", "b.example.com", "c.example.com"] }] },
    ]);
    // The wildcard keys' own routes answer inside the search, deepest suffix tried first.
    const inner = JSON.stringify(miss.handle[0]!.routes);
    expect(inner.indexOf('"~x.c.example.com"')).toBeLessThan(inner.indexOf('"~example.com"'));
    expect(routes.slice(2, -1)).toEqual(
      keyRoutes(
        [
          ["a.example.com", routingTable(snapshot).exact.get("a.example.com")!],
          ["b.example.com", routingTable(snapshot).exact.get("b.example.com")!],
          ["c.example.com", routingTable(snapshot).exact.get("c.example.com")!],
        ],
        "9",
      ),
    );
    expect(routes.at(-1)).toEqual({
      handle: [
        { "@id": "replica_mirror_revision", handler: "vars", mirror_revision: "9" },
        {
          handler: "static_response",
          status_code: 404,
          headers: { "X-Mirror-Reason": ["unknown-host"] },
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
