// The ops listener over a real socket: the probes and /metrics answered by plain node:http, the
// rest by the status API's Fastify app through its `routing`.

import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER } from "../../src/answers/route-answer.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createOpsServer, type OpsServer } from "../../src/ops/ops-server.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { launchDataThread } from "../support/data-thread.ts";
import { hookedDataWorker } from "../support/hooked-data-worker.ts";
import { get } from "../support/http.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { waitUntil } from "../support/wait.ts";
import { snapshotOf } from "../support/world.ts";

const open: OpsServer[] = [];
afterEach(async () => {
  for (const { server, closeStatusApi } of open.splice(0)) {
    await new Promise((r) => server.close(r));
    await closeStatusApi();
  }
});

async function ops(
  more: Pick<Parameters<typeof createOpsServer>[0], "answering" | "stopping"> = {},
) {
  const holder = new SnapshotHolder();
  const metrics = createMetrics();
  const app = createOpsServer({ holder, metrics, retryAfter: DEFAULT_RETRY_AFTER, ...more });
  open.push(app);
  await new Promise<void>((resolve) => app.server.listen(0, "127.0.0.1", resolve));
  return { holder, metrics, app, port: (app.server.address() as AddressInfo).port };
}

/** Status, content type and body of one request on its own connection. */
async function request({ port }: { port: number }, url: string, method = "GET") {
  const r = await get(port, url, {}, { method });
  return { status: r.status, type: r.headers["content-type"], body: r.body };
}

const text = "text/plain; charset=utf-8";

describe("the ops listener", () => {
  it("is healthy from the start", async () => {
    const app = await ops();
    expect(await request(app, "/healthz")).toEqual({ status: 200, type: text, body: "ok" });
    expect(await request(app, "/healthz?probe=1")).toEqual({ status: 200, type: text, body: "ok" });
  });

  it("is ready once the first Snapshot is published, and stays ready", async () => {
    const app = await ops();
    const { holder } = app;
    expect(await request(app, "/readyz")).toEqual({ status: 503, type: text, body: "not synced" });
    holder.swap(snapshotOf(null, {}, 1));
    expect(await request(app, "/readyz")).toEqual({ status: 200, type: text, body: "ok" });
    // Losing the API server publishes nothing new: the last Snapshot is still served.
    expect(await request(app, "/readyz")).toEqual({ status: 200, type: text, body: "ok" });
  });

  it("is unready once shutdown begins, and healthy still", async () => {
    let stopping = false;
    const app = await ops({ stopping: () => stopping });
    app.holder.swap(snapshotOf(null, {}, 1));
    const before = await request(app, "/readyz");
    stopping = true;
    expect([before, await request(app, "/readyz"), await request(app, "/healthz")]).toEqual([
      { status: 200, type: text, body: "ok" },
      { status: 503, type: text, body: "shutting down" },
      { status: 200, type: text, body: "ok" },
    ]);
  });

  it("turns /healthz 503 while the data thread's event loop is blocked, and 200 once it turns again", async () => {
    const { worker, freeze } = hookedDataWorker();
    const { thread } = launchDataThread(memoryLogger("warn").logger, {
      worker,
      heartbeatStaleMs: 1_500,
    });
    try {
      expect((await thread.listening).ok).toBe(true);
      const app = await ops({ answering: () => thread.answering() });
      const healthz = () => request(app, "/healthz");
      const before = await healthz();
      const frozenAt = performance.now();
      freeze(6_000);
      const stalled = await waitUntil(
        async () => {
          const r = await healthz();
          return r.status === 503 && r;
        },
        {
          timeoutMs: 5_000,
          intervalMs: 100,
          what: "/healthz to answer 503",
        },
      );
      const stalledAfterMs = performance.now() - frozenAt;
      await waitUntil(async () => (await healthz()).status === 200, {
        timeoutMs: 10_000,
        intervalMs: 100,
        what: "/healthz to answer 200 again",
      });
      expect({ before, stalled, inTime: stalledAfterMs < 4_000 }).toEqual({
        before: { status: 200, type: text, body: "ok" },
        stalled: { status: 503, type: text, body: "data listener not answering" },
        inTime: true,
      });
    } finally {
      await thread.close(0);
    }
  }, 30_000);

  it("answers HEAD probes like GET, without a body", async () => {
    const app = await ops();
    expect(await request(app, "/readyz", "HEAD")).toEqual({ status: 503, type: text, body: "" });
  });

  it("serves the registry's metrics as Prometheus text", async () => {
    const app = await ops();
    const { metrics } = app;
    metrics.routeCounts.add("routed");
    const r = await request(app, "/metrics");
    expect(r.status).toBe(200);
    expect(r.type).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(r.body.split("\n")).toContain('replica_mirror_route_answers_total{outcome="routed"} 1');
    expect(r.body.split("\n")).toContain("# TYPE process_cpu_seconds_total counter");
  });

  it("hands the status API its requests, and answers any other path 404 not-found", async () => {
    const app = await ops();
    app.holder.swap(snapshotOf(null, {}, 1));
    const json = "application/json; charset=utf-8";
    const answers = [];
    for (const [method, url] of [
      ["GET", "/v1/snapshot"],
      ["GET", "/"],
      ["GET", "/v1/route"],
      ["GET", "/metrics/x"],
      ["POST", "/healthz"],
    ] as const) {
      const r = await request(app, url, method);
      answers.push([
        url,
        r.status,
        r.type,
        url === "/v1/snapshot" ? JSON.parse(r.body).revision : r.body,
      ]);
    }
    expect(answers).toEqual([
      ["/v1/snapshot", 200, json, 1],
      ["/", 404, json, '{"error":"not-found"}'],
      ["/v1/route", 404, json, '{"error":"not-found"}'],
      ["/metrics/x", 404, json, '{"error":"not-found"}'],
      ["/healthz", 404, json, '{"error":"not-found"}'],
    ]);
  });
});
