import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createPushMetrics } from "../../src/ops/push-metrics.ts";
import { DEFAULT_VERIFY_INTERVAL_MS } from "../../src/push/pusher.ts";
import type { PushTarget } from "../../src/push/target.ts";
import { err, ok } from "../../src/result.ts";
import { startPushers } from "../../src/sidecar/push-targets.ts";
import type { RouteView } from "../../src/snapshot/types.ts";
import { FakeClock, settle } from "../support/fake-clock.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { snapshotOf } from "../support/world.ts";

/** A proxy holding whatever was pushed, whose entries someone else can change (`tampered`). */
function proxy(name: string) {
  let held: RouteView | null = null;
  const state = { tampered: false };
  const target: PushTarget = {
    name,
    push: async (view) => {
      held = view;
      state.tampered = false;
      return ok(undefined);
    },
    held: async () => ok(held?.revision ?? null),
    heldDigest: async () =>
      ok(held === null ? null : `${held.revision}${state.tampered ? " victim" : ""}`),
    digestOf: (view) => String(view.revision),
  };
  return { target, state };
}

describe("the sidecar's pushers", () => {
  it("say their first tables were verified once every proxy's was, or at the first interval for one that is down", async () => {
    const clock = new FakeClock();
    const up = proxy("nginx");
    const down = proxy("haproxy");
    const failing: PushTarget = {
      ...down.target,
      push: async () => err({ reason: "unreachable", message: "down" }),
    };
    const pushers = startPushers([up.target, failing], {
      clock,
      metrics: createPushMetrics(new Registry()),
      log: memoryLogger("silent").logger,
    });
    let settledAt: number | null = null;
    void pushers.firstVerified.then(() => {
      settledAt = clock.now();
    });
    await clock.advance(1_000);
    for (const sink of pushers.sinks)
      sink.publish(snapshotOf([{ name: "shop", hostnames: ["shop.example.com"] }], {}, 1));
    await settle();
    const afterPush = settledAt;
    await clock.advance(DEFAULT_VERIFY_INTERVAL_MS - 1_000);
    await pushers.close();
    expect({ afterPush, settledAt }).toEqual({
      afterPush: null,
      settledAt: DEFAULT_VERIFY_INTERVAL_MS,
    });
  });

  it("log one warning naming the proxy and count it when a table changed behind their back", async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const { logger, lines } = memoryLogger("info");
    const nginx = proxy("nginx");
    const pushers = startPushers([nginx.target], {
      clock,
      metrics: createPushMetrics(registry),
      log: logger,
    });
    for (const sink of pushers.sinks)
      sink.publish(
        snapshotOf(
          [{ name: "shop", hostnames: ["victim.example.com"] }],
          { "shop-credentials": { token: "s3cret" } },
          7,
        ),
      );
    await settle();
    const drift = async () =>
      (await registry.getSingleMetricAsString("replica_mirror_proxy_drift_total"))
        .split("\n")
        .filter((l) => !l.startsWith("#"));
    const before = await drift();
    nginx.state.tampered = true;
    await clock.advance(DEFAULT_VERIFY_INTERVAL_MS);
    await pushers.close();
    const logged = lines().map((l) => {
      const { time: _t, pid: _p, hostname: _h, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return rest;
    });
    expect({ before, after: await drift(), logged, table: nginx.state.tampered }).toEqual({
      before: ['replica_mirror_proxy_drift_total{target="nginx"} 0'],
      after: ['replica_mirror_proxy_drift_total{target="nginx"} 1'],
      logged: [
        {
          level: 40,
          target: "nginx",
          revision: 7,
          msg: "proxy table changed behind the sidecar's back: pushing it whole again",
        },
      ],
      table: false,
    });
  });
});
