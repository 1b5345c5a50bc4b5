import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER } from "../../src/answers/route-answer.ts";
import { createStatusApp } from "../../src/ops/status-app.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { snapshotOf } from "../support/world.ts";

function serverLogging(level: string, holder = new SnapshotHolder()) {
  holder.swap(snapshotOf([{ name: "shop", hostnames: ["shop.example.com"] }], {}, 2));
  const { logger, lines } = memoryLogger(level);
  const app = createStatusApp({ holder, logger, retryAfter: DEFAULT_RETRY_AFTER });
  // Fields that vary by run; the rest is compared whole.
  const entries = () =>
    lines().map((l) => {
      const { time, pid, hostname, reqId, responseTime, ...rest } = JSON.parse(l);
      return rest;
    });
  return { app, entries };
}

describe("request logging of the status API", () => {
  it("writes nothing per request at info", async () => {
    const { app, entries } = serverLogging("info");
    await app.inject({ url: "/v1/snapshot" });
    await app.inject({ url: "/v1/apps" });
    await app.inject({ url: "/nope" });
    expect(entries()).toEqual([]);
  });

  it("writes a line when a request comes in and one when it is answered, at debug", async () => {
    const { app, entries } = serverLogging("debug");
    await app.inject({ url: "/v1/snapshot", headers: { host: "sidecar:9090" } });
    expect(entries()).toEqual([
      {
        level: 20,
        msg: "incoming request",
        req: {
          method: "GET",
          url: "/v1/snapshot",
          host: "sidecar:9090",
          remoteAddress: "127.0.0.1",
        },
      },
      { level: 20, msg: "request completed", res: { statusCode: 200 } },
    ]);
  });

  it("logs a bug at error and answers 500 internal, whatever the level", async () => {
    const broken = {
      current() {
        throw new Error("boom");
      },
    } as unknown as SnapshotHolder;
    const { logger, lines } = memoryLogger("warn");
    const app = createStatusApp({ holder: broken, logger, retryAfter: DEFAULT_RETRY_AFTER });
    for (const url of ["/v1/snapshot", "/v1/apps"]) {
      const r = await app.inject({ url, headers: { host: "shop.example.com" } });
      expect({ status: r.statusCode, body: r.json() }).toEqual({
        status: 500,
        body: { error: "internal" },
      });
    }
    const logged = lines().map((l) => JSON.parse(l));
    expect(logged.map((l) => [l.level, l.msg, l.err.message])).toEqual([
      [50, "request failed", "boom"],
      [50, "request failed", "boom"],
    ]);
  });
});
