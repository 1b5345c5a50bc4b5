import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER } from "../../src/answers/route-answer.ts";
import type { AppRecord } from "../../src/ops/records.ts";
import { createStatusApp } from "../../src/ops/status-app.ts";
import { build } from "../../src/snapshot/build.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import {
  meta,
  registryOf,
  registryStatus,
  SHOP,
  SHOP_DECLARED,
  secretData,
  secretsOf,
  snapshotOf,
} from "../support/world.ts";

const BLOG = { name: "blog", hostnames: ["blog.example.com"], secret: "shared", key: "blog" };
// Claims shop's exact hostname too: "shop" sorts first and wins, the conflict is reported.
const SHOP_EU = { name: "shop-eu", hostnames: ["shop.example.com", "eu.example.com"] };

function serverWith(snapshot: Snapshot | null) {
  const holder = new SnapshotHolder();
  if (snapshot !== null) holder.swap(snapshot);
  return createStatusApp({ holder, logger: false, retryAfter: DEFAULT_RETRY_AFTER });
}

const ready = () =>
  snapshotOf(
    [SHOP, BLOG, SHOP_EU],
    { "shop-credentials": { token: "s3cr3t" }, shared: { blog: "" } },
    8,
  );

async function get(snapshot: Snapshot | null, url: string) {
  const r = await serverWith(snapshot).inject({ url });
  return { status: r.statusCode, retryAfter: r.headers["retry-after"], body: r.json() };
}

describe("GET /v1/hosts/:host", () => {
  it("describes an exact match", async () => {
    expect(await get(ready(), "/v1/hosts/SHOP.example.com:443")).toEqual({
      status: 200,
      body: {
        host: "shop.example.com",
        app: "shop",
        upstream: "http://shop:8080",
        ready: true,
        match: "exact",
        pattern: "shop.example.com",
        revision: 8,
      },
    });
  });

  it("describes a wildcard match of an App that is not ready", async () => {
    const snapshot = snapshotOf([SHOP], {}, 2);
    expect(await get(snapshot, "/v1/hosts/a.shop.example.com")).toEqual({
      status: 200,
      body: {
        host: "a.shop.example.com",
        app: "shop",
        upstream: "http://shop:8080",
        ready: false,
        match: "wildcard",
        pattern: "*.shop.example.com",
        revision: 2,
      },
    });
  });

  it("answers 404 with the normalised host when no App serves it", async () => {
    expect(await get(ready(), "/v1/hosts/Nope.example.com.")).toEqual({
      status: 404,
      body: { error: "unknown-host", host: "nope.example.com" },
    });
  });

  it("answers 400 with the reason for a bad host", async () => {
    expect(await get(ready(), "/v1/hosts/%5B::1%5D")).toEqual({
      status: 400,
      body: { error: "bad-host", reason: "ip-literal" },
    });
    expect(await get(ready(), `/v1/hosts/${"a".repeat(300)}`)).toEqual({
      status: 400,
      body: { error: "bad-host", reason: "too-long" },
    });
  });

  it("answers 503 not-synced before the first Snapshot", async () => {
    expect(await get(null, "/v1/hosts/shop.example.com")).toEqual({
      status: 503,
      retryAfter: "1",
      body: { error: "not-synced" },
    });
  });
});

describe("GET /v1/apps and /v1/apps/:name", () => {
  const shopRecord = { ...SHOP_DECLARED, ready: true, reason: null, secretResourceVersion: "1" };

  it("lists every App by name, with readiness and no Secret bytes", async () => {
    expect(await get(ready(), "/v1/apps")).toEqual({
      status: 200,
      body: {
        revision: 8,
        apps: [
          {
            name: "blog",
            hostnames: ["blog.example.com"],
            secretRef: { namespace: "apps", name: "shared", key: "blog" },
            upstream: null,
            credential: null,
            ready: false,
            reason: "value-empty",
            secretResourceVersion: "1",
            tls: null,
          },
          shopRecord,
          {
            name: "shop-eu",
            hostnames: ["shop.example.com", "eu.example.com"],
            secretRef: { namespace: "apps", name: "shop-eu-credentials", key: "token" },
            upstream: null,
            credential: null,
            ready: false,
            reason: "secret-absent",
            secretResourceVersion: null,
            tls: null,
          },
        ],
      },
    });
  });

  it("shows one App, or 404 with the name", async () => {
    expect(await get(ready(), "/v1/apps/shop")).toEqual({ status: 200, body: shopRecord });
    expect(await get(ready(), "/v1/apps/nope")).toEqual({
      status: 404,
      body: { error: "unknown-app", name: "nope" },
    });
  });

  it("shows an App's credential as its prefix and state, the rule a value breaks, never the value", async () => {
    const MARKER = "MARKER-a9f3-status";
    const apps = ["served", "long", "crlf", "absent"].map((name) => ({
      name,
      hostnames: [`${name}.example.com`],
      credential: { prefix: "Bearer " },
    }));
    const secrets = secretsOf([
      ["apps/served-credentials", secretData({ token: MARKER })],
      ["apps/long-credentials", secretData({ token: MARKER.repeat(600) })],
      ["apps/crlf-credentials", secretData({ token: `${MARKER}\r\nX: y` })],
    ]);
    const credentials = async (serveCredentials: boolean) => {
      const snapshot = build(registryOf(apps), secrets, { ...meta(2), serveCredentials });
      const app = serverWith(snapshot);
      const list = await app.inject({ url: "/v1/apps" });
      const one = await app.inject({ url: "/v1/apps/served" });
      expect(`${list.body}${one.body}`).not.toContain("MARKER");
      const records = (list.json() as { apps: AppRecord[] }).apps;
      expect(one.json()).toEqual(records.find((r) => r.name === "served"));
      return records.map((r) => [r.name, r.credential, r.reason]);
    };
    const record = (state: string, rule: string | null = null) => ({
      prefix: "Bearer ",
      state,
      rule,
    });
    expect(await credentials(true)).toEqual([
      ["absent", record("secret-unavailable"), "secret-absent"],
      [
        "crlf",
        record(
          "secret-unusable",
          "the value holds a byte other than visible ASCII, space and tab (a CR, LF or NUL, say)",
        ),
        "value-not-a-header",
      ],
      ["long", record("secret-unusable", "the value is longer than 8192 bytes"), "value-too-long"],
      ["served", record("served"), null],
    ]);
    expect(await credentials(false)).toEqual(
      ["absent", "crlf", "long", "served"].map((name) => [
        name,
        record("credentials-off"),
        "credentials-off",
      ]),
    );
  });

  it("answers 503 not-synced before the first Snapshot", async () => {
    for (const url of ["/v1/apps", "/v1/apps/shop"]) {
      expect(await get(null, url)).toEqual({
        status: 503,
        retryAfter: "1",
        body: { error: "not-synced" },
      });
    }
  });
});

describe("GET /v1/snapshot", () => {
  it("summarises the served Snapshot, conflicts included", async () => {
    expect(await get(ready(), "/v1/snapshot")).toEqual({
      status: 200,
      body: {
        revision: 8,
        synced: true,
        builtAt: "2023-11-14T22:13:20.000Z",
        apps: 3,
        readyApps: 1,
        hostnames: 4,
        registry: {
          present: true,
          resourceVersion: "7",
          error: null,
          refusedApps: [],
          moreRefusedApps: 0,
          contentHash: null,
        },
        conflicts: [{ hostname: "shop.example.com", winner: "shop", losers: ["shop-eu"] }],
        source: "api-server",
        stateSavedAt: null,
        proxies: [],
      },
    });
  });

  it("reports a refused Registry while the last good one is served", async () => {
    const registry = registryStatus("9", "apps[0].name: required");
    const r = await get(snapshotOf([SHOP], {}, 3, registry), "/v1/snapshot");
    expect(r.body.registry).toEqual({ ...registry, moreRefusedApps: 0 });
    expect(r.body.apps).toBe(1);
  });

  it("lists the first ten refused App entries and counts the rest", async () => {
    const refusedApps = Array.from({ length: 25 }, (_, index) => ({
      index,
      name: `app-${index}`,
      reason: "hostnames[0]: port not allowed",
      kept: false,
    }));
    const registry = { ...registryStatus("9"), refusedApps };
    const r = await get(snapshotOf([SHOP], {}, 3, registry), "/v1/snapshot");
    expect(r.body.registry).toEqual({
      ...registry,
      refusedApps: refusedApps.slice(0, 10),
      moreRefusedApps: 15,
    });
  });

  // docs/serving.md spells this body out; the answer must be exactly that value.
  it("answers 503 with the body docs/serving.md documents before the first Snapshot", async () => {
    const documented = /Before the first Snapshot: 503 with `(\{[^`]*\})`/.exec(
      readFileSync("docs/serving.md", "utf8"),
    )?.[1];
    expect(documented).toBeDefined();
    const body: unknown = JSON.parse(String(documented).replace(/(\w+):/g, '"$1":'));
    expect(await get(null, "/v1/snapshot")).toEqual({ status: 503, retryAfter: "1", body });
  });
});

describe("everything else the status API is asked", () => {
  it("answers 404 JSON for unknown paths and for methods a status route does not take", async () => {
    for (const [method, url] of [
      ["GET", "/"],
      ["GET", "/v1"],
      ["GET", "/v1/routes"],
      ["POST", "/v1/apps"],
      ["DELETE", "/v1/snapshot"],
    ] as const) {
      const r = await serverWith(ready()).inject({ method, url, payload: "x" });
      expect({ status: r.statusCode, body: r.json() }).toEqual({
        status: 404,
        body: { error: "not-found" },
      });
    }
  });

  it("answers 400 JSON for a path it cannot decode", async () => {
    const r = await serverWith(ready()).inject({ url: "/v1/hosts/%zz" });
    expect({ status: r.statusCode, body: r.json() }).toEqual({
      status: 400,
      body: { error: "bad-request" },
    });
  });
});
