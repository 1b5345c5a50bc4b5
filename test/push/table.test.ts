import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER, routeAnswerer } from "../../src/answers/route-answer.ts";
import { routingTable } from "../../src/push/table.ts";
import { tableAnswer } from "../../src/push/table-lookup.ts";
import { upstreamTarget } from "../../src/push/upstream-target.ts";
import { build } from "../../src/snapshot/build.ts";
import { meta, registryOf, secretData, secretsOf, snapshotOf } from "../support/world.ts";
import { requestHost, snapshotOfWorld, zeroHopWorld } from "../support/zero-hop-arbitraries.ts";

const UPSTREAMS = [
  "http://10.0.0.1:8080",
  "http://shop.svc:80/",
  "https://tls.example",
  "a b\u00e9",
];

describe("the zero-hop routing table", () => {
  it("holds every hostname and wildcard suffix with its App's answer, conflicts settled", () => {
    const snapshot = snapshotOf(
      [
        { name: "blog", hostnames: ["blog.example.com"], upstream: "http://blog.svc" },
        {
          name: "shop",
          hostnames: ["shop.example.com", "*.example.com"],
          upstream: "http://10.1.2.3:81",
        },
        { name: "zeta", hostnames: ["shop.example.com", "*.a.example.com"] },
      ],
      { "shop-credentials": { token: "t" }, "zeta-credentials": { token: "z" } },
      7,
    );
    const shop = {
      kind: "routed",
      app: "shop",
      upstream: "http://10.1.2.3:81",
      target: { host: "10.1.2.3", port: 81, literal: true },
      credential: null,
    };
    const zeta = { kind: "routed", app: "zeta", upstream: null, target: null, credential: null };
    expect(routingTable(snapshot)).toEqual({
      revision: 7,
      exact: new Map<string, unknown>([
        ["blog.example.com", { kind: "not-routed", app: "blog", reason: "secret-unavailable" }],
        ["shop.example.com", shop],
      ]),
      wildcard: new Map<string, unknown>([
        ["example.com", shop],
        ["a.example.com", zeta],
      ]),
    });
  });

  it("answers every host as /v1/route answers its Host, for random Registries", () => {
    const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
    fc.assert(
      fc.property(
        zeroHopWorld(UPSTREAMS),
        fc.array(requestHost, { maxLength: 30 }),
        (world, hosts) => {
          const snapshot = snapshotOfWorld(world, 3);
          const table = routingTable(snapshot);
          for (const host of hosts) {
            const { outcome, status, headers } = answer(snapshot, ["Host", host]);
            expect({ host, ...tableAnswer(table, host) }).toEqual({
              host,
              outcome,
              status,
              headers,
            });
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("carries each App's credential, or why it is not routed, and answers as /v1/route does", () => {
    const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
    const apps = [
      { name: "keyed", hostnames: ["keyed.example"], credential: { prefix: "Bearer " } },
      { name: "long", hostnames: ["long.example"], credential: {} },
      { name: "plain", hostnames: ["plain.example"], upstream: "http://plain.svc" },
    ];
    const secrets = secretsOf([
      ["apps/keyed-credentials", secretData({ token: "k1\n" })],
      ["apps/long-credentials", secretData({ token: "x".repeat(8193) })],
      ["apps/plain-credentials", secretData({ token: "p" })],
    ]);
    const tables = [true, false].map((serveCredentials) => {
      const snapshot = build(registryOf(apps), secrets, { ...meta(4), serveCredentials });
      const table = routingTable(snapshot);
      for (const a of apps) {
        const host = a.hostnames[0]!;
        expect(tableAnswer(table, host)).toEqual(answer(snapshot, ["Host", host]));
      }
      return [...table.exact].sort(([a], [b]) => (a < b ? -1 : 1));
    });
    const plain = {
      kind: "routed",
      app: "plain",
      upstream: "http://plain.svc",
      target: { host: "plain.svc", port: 80, literal: false },
      credential: null,
    };
    expect(tables).toEqual([
      [
        [
          "keyed.example",
          { kind: "routed", app: "keyed", upstream: null, target: null, credential: "Bearer k1" },
        ],
        ["long.example", { kind: "not-routed", app: "long", reason: "secret-unusable" }],
        ["plain.example", plain],
      ],
      [
        ["keyed.example", { kind: "not-routed", app: "keyed", reason: "credentials-off" }],
        ["long.example", { kind: "not-routed", app: "long", reason: "credentials-off" }],
        ["plain.example", plain],
      ],
    ]);
    const table = routingTable(
      build(registryOf(apps), secrets, { ...meta(4), serveCredentials: true }),
    );
    expect(["keyed", "long"].map((a) => tableAnswer(table, `${a}.example`))).toEqual([
      {
        outcome: "routed",
        status: 200,
        headers: {
          "x-mirror-app": "keyed",
          "x-mirror-revision": "4",
          "content-length": "0",
          "x-mirror-credential": "Bearer k1",
        },
      },
      {
        outcome: "secret-unusable",
        status: 503,
        headers: {
          "retry-after": "5",
          "x-mirror-reason": "secret-unusable",
          "x-mirror-app": "long",
          "content-length": "0",
        },
      },
    ]);
  });

  it("answers bad-host for a host whose last label is a number, as /v1/route does", () => {
    const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
    const snapshot = snapshotOf([{ name: "a", hostnames: ["a.example", "*.a.example"] }]);
    const table = routingTable(snapshot);
    const hosts = ["10.0.0.12:8000", "127.1", "0X7F.1", "x.a.example.0x1f.", "a.example.0x", "7"];
    const badHost = {
      outcome: "bad-host",
      status: 400,
      headers: { "x-mirror-reason": "bad-host", "content-length": "0" },
    };
    expect(hosts.map((h) => [h, tableAnswer(table, h)])).toEqual(hosts.map((h) => [h, badHost]));
    expect(hosts.map((h) => [h, answer(snapshot, ["Host", h])])).toEqual(
      hosts.map((h) => [h, badHost]),
    );
  });

  it("answers not-synced before a table, and bad-host for a request without one Host", () => {
    const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
    const table = routingTable(snapshotOf([{ name: "a", hostnames: ["a.example"] }]));
    expect(tableAnswer(null, "a.example")).toEqual(answer(null, ["Host", "a.example"]));
    expect(tableAnswer(table, null)).toEqual(answer(snapshotOf([]), []));
  });
});

describe("upstreamTarget", () => {
  it("reads http://host[:port] and nothing else", () => {
    expect(
      [
        "http://shop.tenant-a.svc.cluster.local:8080",
        "http://10.0.0.7",
        "http://10.0.0.7:65535/",
        "http://300.0.0.7:1",
        "http://h:0",
        "http://h:65536",
        "https://h",
        "http://h/path",
        "http://user@h",
        "http://[::1]:80",
        null,
      ].map(upstreamTarget),
    ).toEqual([
      { host: "shop.tenant-a.svc.cluster.local", port: 8080, literal: false },
      { host: "10.0.0.7", port: 80, literal: true },
      { host: "10.0.0.7", port: 65535, literal: true },
      { host: "300.0.0.7", port: 1, literal: false },
      null,
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});
