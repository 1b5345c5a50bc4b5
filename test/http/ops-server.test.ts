import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/http/metrics.ts";
import { createOpsServer } from "../../src/http/ops-server.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { snapshotOf } from "../support/world.ts";

function ops() {
  const holder = new SnapshotHolder();
  const metrics = createMetrics();
  return { holder, metrics, app: createOpsServer({ holder, metrics }) };
}

async function get(
  app: ReturnType<typeof ops>["app"],
  url: string,
  method: "GET" | "HEAD" | "POST" = "GET",
) {
  const r = await app.inject({ method, url });
  return { status: r.statusCode, type: r.headers["content-type"], body: r.body };
}

const text = "text/plain; charset=utf-8";

describe("the ops listener", () => {
  it("is healthy from the start", async () => {
    const { app } = ops();
    expect(await get(app, "/healthz")).toEqual({ status: 200, type: text, body: "ok" });
  });

  it("is ready once the first Snapshot is published, and stays ready", async () => {
    const { app, holder } = ops();
    expect(await get(app, "/readyz")).toEqual({ status: 503, type: text, body: "not synced" });
    holder.swap(snapshotOf(null, {}, 1));
    expect(await get(app, "/readyz")).toEqual({ status: 200, type: text, body: "ok" });
    // Losing the API server publishes nothing new: the last Snapshot is still served.
    expect(await get(app, "/readyz")).toEqual({ status: 200, type: text, body: "ok" });
  });

  it("answers HEAD probes like GET, without a body", async () => {
    const { app } = ops();
    expect(await get(app, "/readyz", "HEAD")).toEqual({ status: 503, type: text, body: "" });
  });

  it("serves the registry's metrics as Prometheus text", async () => {
    const { app, metrics } = ops();
    metrics.routeAnswered("routed");
    const r = await get(app, "/metrics");
    expect(r.status).toBe(200);
    expect(r.type).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(r.body.split("\n")).toContain('replica_mirror_route_answers_total{outcome="routed"} 1');
    expect(r.body.split("\n")).toContain("# TYPE process_cpu_seconds_total counter");
  });

  it("serves nothing else", async () => {
    const { app } = ops();
    for (const [method, url] of [
      ["GET", "/"],
      ["GET", "/v1/route"],
      ["GET", "/v1/snapshot"],
      ["GET", "/metrics/x"],
      ["POST", "/healthz"],
    ] as const) {
      expect(await get(app, url, method)).toEqual({ status: 404, type: text, body: "not found" });
    }
  });
});
