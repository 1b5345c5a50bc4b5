import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER } from "../../src/answers/route-answer.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createOpsServer } from "../../src/ops/ops-server.ts";
import { appRecordSchema } from "../../src/ops/schemas.ts";
import { createStatusApp } from "../../src/ops/status-app.ts";
import { build } from "../../src/snapshot/build.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { listApps } from "../../src/snapshot/lookup.ts";
import { get } from "../support/http.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { startRouteServer } from "../support/route-answers.ts";
import { meta, registryOf, secretData, secretsOf, snapshotOf } from "../support/world.ts";

const VALUES = { shop: "SECRET-shop-7f3a91", blog: "SECRET-blog-c04e2d" };
// The Snapshot holds the bytes (ADR 20), the API sends base64: neither form may leave the process.
const FORBIDDEN = Object.values(VALUES).flatMap((v) => [v, Buffer.from(v).toString("base64")]);

/** Apps whose credentials are served: the only values a Snapshot keeps (ADR 68). */
const snapshot = () =>
  build(
    registryOf([
      {
        name: "shop",
        hostnames: ["shop.example.com", "*.shop.example.com"],
        upstream: "http://s",
        credential: {},
      },
      { name: "blog", hostnames: ["blog.example.com"], credential: {} },
    ]),
    secretsOf([
      ["apps/shop-credentials", secretData({ token: VALUES.shop })],
      ["apps/blog-credentials", secretData({ token: VALUES.blog })],
    ]),
    { ...meta(), serveCredentials: true },
  );

/** The same Apps without a credential: their Secrets' values are read, never kept. */
const plainSnapshot = () =>
  snapshotOf(
    [
      { name: "shop", hostnames: ["shop.example.com", "*.shop.example.com"], upstream: "http://s" },
      { name: "blog", hostnames: ["blog.example.com"] },
    ],
    { "shop-credentials": { token: VALUES.shop }, "blog-credentials": { token: VALUES.blog } },
  );

function leaks(text: string): string[] {
  return FORBIDDEN.filter((f) => text.includes(f));
}

describe("Secret bytes", () => {
  it("are in the Snapshot, so the checks below can find them", () => {
    const values = listApps(snapshot()).map((a) => a.secretValue);
    expect(values.sort()).toEqual([VALUES.blog, VALUES.shop]);
  });

  it("never appear in any answer, header or log line of either listener", async () => {
    const { logger, lines } = memoryLogger("trace");
    const holder = new SnapshotHolder();
    holder.swap(snapshot());
    const metrics = createMetrics();
    const data = await startRouteServer({ view: () => holder.current() });
    const { server: ops, closeStatusApi } = createOpsServer({
      holder,
      metrics,
      logger,
      retryAfter: DEFAULT_RETRY_AFTER,
    });
    metrics.observer.published({
      snapshot: snapshot(),
      kind: "whole",
      buildMs: 1,
      eventToSwapMs: 2,
    });

    const routeRequests: [string, string][] = [
      ["/v1/route", "shop.example.com"],
      ["/v1/route/x", "a.shop.example.com"],
      ["/v1/route", "blog.example.com"],
      ["/v1/route", "nope.example.com"],
      ["/v1/route", "[::1]"],
      ["/nope", "shop.example.com"],
    ];
    const opsRequests = [
      "/v1/hosts/shop.example.com",
      "/v1/hosts/blog.example.com",
      "/v1/apps",
      "/v1/apps/shop",
      "/v1/apps/blog",
      "/v1/snapshot",
      "/nope",
      "/metrics",
      "/readyz",
      "/healthz",
    ];
    await new Promise<void>((resolve) => ops.listen(0, "127.0.0.1", resolve));
    try {
      for (const [url, host] of routeRequests) {
        // The one place a served credential goes: its App's 200 (ADR 53, docs/security.md).
        const r = await get(data.port, url, { host });
        const { "x-mirror-credential": _, ...headers } = r.headers;
        expect(leaks(JSON.stringify(headers) + r.body), url).toEqual([]);
      }
      for (const url of opsRequests) {
        const r = await get((ops.address() as AddressInfo).port, url);
        expect(leaks(JSON.stringify(r.headers) + r.body), url).toEqual([]);
      }
    } finally {
      await new Promise((resolve) => ops.close(resolve));
      await closeStatusApi();
      await data.close();
    }
    // The status API logs each request at trace.
    expect(lines().length).toBeGreaterThan(opsRequests.length);
    expect(leaks(lines().join("\n"))).toEqual([]);
  });

  it("cannot be serialised by the App schema even if a handler passed an App whole", async () => {
    const app = Fastify();
    const shop = listApps(plainSnapshot()).find((a) => a.name === "shop")!;
    app.get("/leak", { schema: { response: { 200: appRecordSchema } } }, () => shop);
    const r = await app.inject({ url: "/leak" });
    expect(r.statusCode).toBe(200);
    expect(leaks(r.body)).toEqual([]);
    // Byte for byte the record `/v1/apps/shop` serves (its fields are pinned in status-api).
    const holder = new SnapshotHolder();
    holder.swap(plainSnapshot());
    const record = await createStatusApp({
      holder,
      logger: false,
      retryAfter: DEFAULT_RETRY_AFTER,
    }).inject({
      url: "/v1/apps/shop",
    });
    expect(r.body).toBe(record.body);
  });

  it("cannot be serialised by the App schema from an App whose credential is served either", async () => {
    const MARKER = "MARKER-a9f3-whole";
    const served = build(
      registryOf([
        { name: "vault", hostnames: ["vault.example.com"], credential: { prefix: "Key " } },
      ]),
      secretsOf([["apps/vault-credentials", secretData({ token: MARKER })]]),
      { ...meta(), serveCredentials: true },
    );
    const vault = listApps(served)[0]!;
    expect(vault.credential).toBe(`Key ${MARKER}`);
    const app = Fastify({ logger: false });
    app.get("/leak", { schema: { response: { 200: appRecordSchema } } }, () => vault);
    const r = await app.inject({ url: "/leak" });
    // The record's `credential` is an object with a required prefix: the string fails to serialise.
    expect({ status: r.statusCode, leaks: r.body.includes(MARKER) }).toEqual({
      status: 500,
      leaks: false,
    });
  });
});
