// The API server going away after the first sync: the sidecar keeps answering from its last
// Snapshot, /readyz stays 200, replica_mirror_last_contact_age_seconds grows; the API server
// back on the same port with the same state, changed meanwhile: the sidecar converges. And the
// converse the staleness metric needs to be useful: on a healthy but quiet cluster it stays low.

import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { afterEach, describe, expect, it } from "vitest";
import type { AppRecord } from "../../src/ops/records.ts";
import { get, getJson, metricValue, untilReady } from "../support/http.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import { APP_NS } from "../support/world.ts";
import { seedWorld } from "../support/world-apps.ts";

let envtest: Envtest | undefined;
let running: TestSidecar | undefined;

afterEach(async () => {
  await running?.stop();
  await envtest?.close();
  running = undefined;
  envtest = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scrape(r: TestSidecar): Promise<{ age: number; revision: number; synced: number }> {
  const text = (await get(r.ops.port, "/metrics")).body;
  return {
    age: metricValue(text, "replica_mirror_last_contact_age_seconds") ?? Number.NaN,
    revision: metricValue(text, "replica_mirror_snapshot_revision") ?? Number.NaN,
    synced: metricValue(text, "replica_mirror_synced") ?? Number.NaN,
  };
}

async function route(r: TestSidecar, host: string): Promise<[number, string | undefined]> {
  const a = await get(r.data.port, "/v1/route", { host });
  return [a.status, String(a.headers["x-mirror-reason"] ?? a.headers["x-mirror-app"])];
}

const apps = async (r: TestSidecar) =>
  Object.fromEntries(
    (await getJson<{ apps: AppRecord[] }>(r.ops.port, "/v1/apps")).apps.map((a) => [a.name, a]),
  );

/** The fuzz world on an API server with a bookmark every 200 ms, and a ready sidecar on it. */
async function startReady(watchTimeoutSeconds: number): Promise<TestSidecar> {
  envtest = await startEnvtest({ bookmarkIntervalMs: 200 });
  seedWorld(envtest);
  running = await startTestSidecar(envtest, {
    logLevel: "info",
    watchTimeoutSeconds,
    reflector: "production",
  });
  await untilReady(running.ops.port);
  return running;
}

describe("the API server gone after the first sync", () => {
  it("keeps serving the last Snapshot and stays ready while staleness grows, then converges when it is back", async () => {
    const r = await startReady(1);
    await waitUntil(async () => ((await apps(r)).shop?.ready ? true : undefined), {
      timeoutMs: 10_000,
      what: "shop ready",
    });
    const before = await scrape(r);
    // Bookmarks every 200 ms keep the age under a second on a quiet machine; 5 s leave a busy one
    // room.
    expect(before.age).toBeLessThan(5);
    expect(await route(r, "shop.example.com")).toEqual([200, "shop"]);
    expect(await route(r, "blog.example.com")).toEqual([503, "secret-unavailable"]);

    const old = envtest!;
    const { port, state } = old;
    await old.close();
    envtest = undefined;

    // Down: answers from the last Snapshot, ready, staleness growing.
    await sleep(1_500);
    const down1 = await scrape(r);
    await sleep(1_500);
    const down2 = await scrape(r);
    expect(await route(r, "shop.example.com")).toEqual([200, "shop"]);
    expect(await route(r, "blog.example.com")).toEqual([503, "secret-unavailable"]);
    expect(await route(r, "nope.example.org")).toEqual([404, "unknown-host"]);
    expect((await get(r.ops.port, "/readyz")).status).toBe(200);
    expect((await get(r.ops.port, "/healthz")).status).toBe(200);
    expect(down2.revision).toBe(before.revision);
    expect(down2.synced).toBe(1);
    expect(down1.age).toBeGreaterThan(1.2);
    expect(down2.age).toBeGreaterThan(down1.age + 1);

    // Changed while down: blog's Secret appears, shop's changes.
    const blog = old.apply({
      namespace: APP_NS,
      name: "blog-credentials",
      data: { token: "blog-while-down" },
    });
    const shop = old.apply({
      namespace: APP_NS,
      name: "shop-credentials",
      data: { token: "shop-while-down" },
    });

    envtest = await startEnvtest({ port, state, bookmarkIntervalMs: 200 });
    const back = Date.now();
    await waitUntil(
      async () => {
        const a = await apps(r);
        return a.blog?.ready &&
          a.blog.secretResourceVersion === blog.metadata.resourceVersion &&
          a.shop?.secretResourceVersion === shop.metadata.resourceVersion
          ? true
          : undefined;
      },
      { timeoutMs: 45_000, what: "convergence after the API server came back" },
    );
    const convergedMs = Date.now() - back;
    expect(await route(r, "blog.example.com")).toEqual([200, "blog"]);
    expect(await route(r, "shop.example.com")).toEqual([200, "shop"]);
    const after = await scrape(r);
    // The 3 s asleep above put a gauge that missed the return at 3 s or more.
    expect(after.age).toBeLessThan(3);
    expect(after.revision).toBeGreaterThan(before.revision);
    console.log(
      `API server gone: staleness ${down1.age.toFixed(1)} s then ${down2.age.toFixed(1)} s while down; converged ${convergedMs} ms after it came back; staleness then ${after.age.toFixed(1)} s`,
    );
  }, 60_000);

  // Two healthy watches with a BOOKMARK every 200 ms and nothing changing: the API server is
  // heard from five times a second, so the age stays well under a second (3 s allowed for a busy
  // machine, against the 5 s a mirror deaf to bookmarks would show after the sleep). With the default
  // --watch-timeout 300 a watch ends on its own only every 5-10 minutes, so a mirror that does not
  // count bookmarks as contact reports a quiet, healthy cluster as minutes stale.
  it("keeps staleness low on a healthy, quiet cluster that sends only bookmarks", async () => {
    const r = await startReady(60);
    await waitUntil(() => (envtest?.openWatches === 2 ? true : undefined), {
      timeoutMs: 10_000,
      what: "two watches",
    });
    await sleep(5_000);
    expect((await scrape(r)).age).toBeLessThan(3);
  }, 20_000);
});
