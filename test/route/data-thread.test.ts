// The data thread through its public surfaces (ADR 27): HTTP on its port, and what the main thread
// sees of it (the revision it serves, the route counts in /metrics, the log, its end).

import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/snapshot/types.ts";
import {
  launchDataThread,
  startTestDataThread,
  type TestDataThread,
} from "../support/data-thread.ts";
import { get, metricValue } from "../support/http.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { waitUntil } from "../support/wait.ts";
import { snapshotOf } from "../support/world.ts";

const SHOP = [{ name: "shop", hostnames: ["shop.example.com"], upstream: "http://shop:8080" }];
const running: TestDataThread[] = [];
const start = async (snapshot?: Snapshot, logger = memoryLogger("warn").logger) => {
  const t = await startTestDataThread(snapshot, logger);
  running.push(t);
  return t;
};
afterEach(async () => {
  await Promise.all(running.splice(0).map((t) => t.close()));
});

/** The route answer's status and contract headers for `host`. */
async function route(port: number, host: string) {
  const r = await get(port, "/v1/route", { host });
  return {
    status: r.status,
    app: r.headers["x-mirror-app"],
    reason: r.headers["x-mirror-reason"],
    revision: r.headers["x-mirror-revision"],
  };
}

describe("the data thread", () => {
  it("answers every target but /v1/route 404 not-found, whatever the method", async () => {
    const t = await start(snapshotOf(SHOP, { "shop-credentials": { token: "t" } }, 1));
    const answers = [];
    for (const [path, method] of [
      ["/v1/hosts/shop.example.com", "GET"],
      ["/v1/snapshot", "GET"],
      ["/healthz", "HEAD"],
      ["/", "POST"],
    ] as const) {
      const r = await get(t.port, path, { host: "shop.example.com" }, { method });
      answers.push([path, r.status, r.headers["x-mirror-reason"], r.body]);
    }
    expect(answers).toEqual([
      ["/v1/hosts/shop.example.com", 404, "not-found", ""],
      ["/v1/snapshot", 404, "not-found", ""],
      ["/healthz", 404, "not-found", ""],
      ["/", 404, "not-found", ""],
    ]);
  });

  it("answers not-synced until its first view, then from each view it is sent", async () => {
    const t = await start();
    expect(t.thread.servedRevision()).toBe(0);
    expect(await route(t.port, "shop.example.com")).toEqual({
      status: 503,
      app: undefined,
      reason: "not-synced",
      revision: undefined,
    });
    await t.publish(snapshotOf(SHOP, {}, 1));
    expect(await route(t.port, "shop.example.com")).toEqual({
      status: 503,
      app: "shop",
      reason: "secret-unavailable",
      revision: undefined,
    });
    await t.publish(snapshotOf(SHOP, { "shop-credentials": { token: "t" } }, 2));
    expect([t.thread.servedRevision(), await route(t.port, "shop.example.com")]).toEqual([
      2,
      { status: 200, app: "shop", reason: undefined, revision: "2" },
    ]);
  });

  it("counts the route answers it gives in the main thread's /metrics", async () => {
    const t = await start(snapshotOf(SHOP, { "shop-credentials": { token: "t" } }, 1));
    for (const host of ["shop.example.com", "shop.example.com", "nope.example.com", "[::1]"])
      await get(t.port, "/v1/route", { host });
    await get(t.port, "/v1/hosts/shop.example.com");
    const text = await t.metrics.registry.metrics();
    const count = (outcome: string) =>
      metricValue(text, "replica_mirror_route_answers_total", { outcome });
    // The last request is no route request: it is answered 404 and not counted.
    expect(["routed", "unknown-host", "bad-host", "not-synced"].map((o) => [o, count(o)])).toEqual([
      ["routed", 2],
      ["unknown-host", 1],
      ["bad-host", 1],
      ["not-synced", 0],
    ]);
  });

  it("reports its own V8 heap in the main thread's /metrics, and none once it has ended", async () => {
    const t = await start(snapshotOf(SHOP, { "shop-credentials": { token: "t" } }, 1));
    const heap = async () => {
      const text = await t.metrics.registry.metrics();
      return {
        used: metricValue(text, "replica_mirror_data_thread_heap_used_bytes"),
        total: metricValue(text, "replica_mirror_data_thread_heap_total_bytes"),
      };
    };
    const running = await heap();
    await t.thread.close(0);
    expect({
      running: running.used! > 1024 * 1024 && running.total! >= running.used!,
      ended: await heap(),
    }).toEqual({
      running: true,
      ended: { used: 0, total: 0 },
    });
  });

  it("answers a route request that throws with 500 internal and logs the bug", async () => {
    const { logger, lines } = memoryLogger("warn");
    const good = snapshotOf(SHOP, { "shop-credentials": { token: "t" } }, 1);
    // A view no build produces: an App name with a line break, so writing its header throws.
    const broken = { ...good, routes: { ...good.routes, names: ["shop\r\nx-evil: 1"] } };
    const t = await start(broken, logger);
    const r = await get(t.port, "/v1/route", { host: "shop.example.com" });
    expect({ status: r.status, reason: r.headers["x-mirror-reason"], body: r.body }).toEqual({
      status: 500,
      reason: "internal",
      body: "",
    });
    await waitUntil(() => (lines().length > 0 ? true : undefined));
    expect(lines().map((l) => [JSON.parse(l).level, JSON.parse(l).msg])).toEqual([
      [50, "request failed"],
    ]);
    // The thread keeps serving.
    await t.publish(snapshotOf(SHOP, { "shop-credentials": { token: "t" } }, 2));
    expect((await route(t.port, "shop.example.com")).status).toBe(200);
  });

  it("reports a port already in use as a value, and ends", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const { thread } = launchDataThread(memoryLogger("warn").logger, {
      listen: { host: "127.0.0.1", port },
    });
    const listening = await thread.listening;
    await thread.close(0);
    taken.close();
    expect(listening).toEqual({ ok: false, error: expect.stringContaining("EADDRINUSE") });
  });

  it("tells the main thread when it ends by itself", async () => {
    const { thread } = launchDataThread(memoryLogger("warn").logger, {
      resourceLimits: { maxOldGenerationSizeMb: 24 },
    });
    expect(await thread.listening).toEqual({ ok: true, value: expect.any(Number) });
    // A view larger than the thread's heap may hold, made of many small parts.
    const apps = Array.from({ length: 200_000 }, (_, i) => ({
      name: `app-${i}`,
      hostnames: [`app-${i}.example.com`, `*.app-${i}.example.com`],
    }));
    thread.publish(snapshotOf(apps, {}, 1));
    expect(await thread.ended).toMatch(/^the data thread (failed|exited)/);
    await thread.close(0);
  });
});
