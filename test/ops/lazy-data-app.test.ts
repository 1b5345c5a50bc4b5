// The status API's Fastify app is loaded when the first forwarded request comes (ADR 28).

import { describe, expect, it } from "vitest";
import { lazyDataApp } from "../../src/ops/lazy-data-app.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { snapshotOf } from "../support/world.ts";

const request = (url: string) => ({
  method: "GET",
  url,
  rawHeaders: ["Host", "sidecar"],
  remoteAddress: "127.0.0.1",
  remotePort: 40000,
});

describe("the lazily loaded data app", () => {
  it("answers requests that come while it loads, then from the Snapshot the holder has", async () => {
    const holder = new SnapshotHolder();
    const app = lazyDataApp({
      holder,
      logger: memoryLogger("warn").logger,
      metrics: createMetrics(),
    });
    const answers = await Promise.all([
      app.answer(request("/v1/snapshot")),
      app.answer(request("/nope")),
    ]);
    holder.swap(snapshotOf([{ name: "shop", hostnames: ["shop.example.com"] }], {}, 1));
    const after = await app.answer(request("/v1/apps"));
    await app.close();
    const text = (b: Uint8Array) => Buffer.from(b).toString();
    expect(
      [...answers, after].map((a) => ({ status: a.status, body: JSON.parse(text(a.body)) })),
    ).toEqual([
      {
        status: 503,
        body: {
          apps: 0,
          builtAt: null,
          conflicts: [],
          hostnames: 0,
          readyApps: 0,
          registry: null,
          revision: 0,
          synced: false,
        },
      },
      { status: 404, body: { error: "not-found" } },
      {
        status: 200,
        body: expect.objectContaining({ apps: [expect.objectContaining({ name: "shop" })] }),
      },
    ]);
  });

  it("closes without loading anything when nothing was asked", async () => {
    const app = lazyDataApp({
      holder: new SnapshotHolder(),
      logger: memoryLogger("warn").logger,
      metrics: createMetrics(),
    });
    await expect(app.close()).resolves.toBeUndefined();
  });
});
