import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReflectorStatus } from "../../src/kube/cache/reflector-status.ts";
import { appState, startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import { envtestFor, writeRegistry, writeSecret } from "../support/world.ts";

let envtest: Envtest;
let m: TestSidecar | undefined;
let statuses: { name: string; status: ReflectorStatus }[];

// Credentials declared and served: the mirror keeps the values these tests follow (ADR 68).
const apps = [
  { name: "shop", hostnames: ["shop.example.com"], namespace: "tenant-a", credential: {} },
  { name: "blog", hostnames: ["blog.example.com"], namespace: "tenant-b", credential: {} },
];

async function started(): Promise<TestSidecar> {
  statuses = [];
  m = await startTestSidecar(envtest, {
    flags: ["--serve-credentials", "true"],
    observer: { reflector: (name, status) => statuses.push({ name, status }) },
  });
  await waitUntil(() => m!.holder.current() ?? undefined, {
    timeoutMs: 10_000,
    what: "first Snapshot",
  });
  return m;
}

const secretValueOf = (mut: TestSidecar, app: string) => {
  const s = appState(mut.holder, app);
  return typeof s === "object" ? s.value : s;
};
const untilValue = (mut: TestSidecar, app: string, value: string | null, timeoutMs = 10_000) =>
  waitUntil(() => (secretValueOf(mut, app) === value ? true : undefined), {
    timeoutMs: timeoutMs,
    what: `${app}=${value}`,
  });
const lists = () => envtest.requests.entries().filter((e) => e.verb === "list").length;

beforeEach(async () => {
  envtest = await envtestFor();
  writeSecret(envtest, "tenant-a", "shop-credentials", { token: "a1" });
  writeSecret(envtest, "tenant-b", "blog-credentials", { token: "b1" });
  writeRegistry(envtest, apps);
});
afterEach(async () => {
  await m?.stop();
  m = undefined;
  await envtest.close();
});

describe("mirror under API-server faults", () => {
  it("resumes dropped watches from the last resourceVersion without relisting", async () => {
    const mut = await started();
    const listsBefore = lists();
    for (let i = 0; i < 3; i++) {
      envtest.faults.dropWatches();
      writeSecret(envtest, "tenant-a", "shop-credentials", { token: `a-drop-${i}` });
      await untilValue(mut, "shop", `a-drop-${i}`);
    }
    expect(lists()).toBe(listsBefore);
    const resumed = envtest.requests
      .entries()
      .filter((e) => e.verb === "watch" && e.query.resourceVersion !== undefined);
    expect(resumed.every((e) => e.query.allowWatchBookmarks === "true")).toBe(true);
  });

  it("relists after a 410 and sees Secrets deleted while it was disconnected", async () => {
    const mut = await started();
    envtest.faults.stall(true);
    envtest.delete("tenant-b", "blog-credentials");
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "a-after-compaction" });
    envtest.faults.compact();
    envtest.faults.dropWatches();
    envtest.faults.stall(false);
    await untilValue(mut, "blog", null);
    await untilValue(mut, "shop", "a-after-compaction");
    expect(statuses.some((s) => s.status.kind === "relist" && s.status.reason === "expired")).toBe(
      true,
    );
    expect(appState(mut.holder, "blog")).toEqual({
      ready: false,
      value: null,
      reason: "secret-absent",
    });
  });

  it("detects a stalled watch and converges while the stall lasts", async () => {
    const mut = await started();
    // Stall the watches themselves, not a list that has not turned into a watch yet.
    await waitUntil(() => (envtest.openWatches === 2 ? true : undefined));
    envtest.faults.stall(true);
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "a-during-stall" });
    // The stalled connection holds the event; only the client-side inactivity deadline can
    // notice, tear it down and resume on a fresh watch, which the stall does not hold.
    await untilValue(mut, "shop", "a-during-stall", 15_000);
    envtest.faults.stall(false);
    expect(
      statuses.some((s) => s.status.kind === "watch-restart" && s.status.reason === "inactive"),
    ).toBe(true);
  }, 20_000);

  it("backs off on failing lists (500, then 429 with Retry-After) and recovers", async () => {
    // Paged lists: a server with the WatchList feature gate off.
    envtest.setFeatureGates({ WatchList: false });
    envtest.faults.failNext({ verb: "list", count: 2, status: 500 });
    envtest.faults.failNext({ verb: "list", count: 1, status: 429, retryAfterSeconds: 1 });
    const t0 = Date.now();
    const mut = await started();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(secretValueOf(mut, "shop")).toBe("a1");
    const backoffs = statuses.filter((s) => s.status.kind === "backoff").map((s) => s.status);
    expect(backoffs.length).toBeGreaterThanOrEqual(3);
  });

  it("backs off on failing streaming lists (500, then 429 with Retry-After) and recovers", async () => {
    envtest.faults.failNext({ verb: "watch", count: 2, status: 500 });
    envtest.faults.failNext({ verb: "watch", count: 1, status: 429, retryAfterSeconds: 1 });
    const t0 = Date.now();
    const mut = await started();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(secretValueOf(mut, "shop")).toBe("a1");
    const backoffs = statuses.filter((s) => s.status.kind === "backoff").map((s) => s.status);
    expect({ backoffs: backoffs.length >= 3, lists: lists() }).toEqual({
      backoffs: true,
      lists: 0,
    });
  });

  it("converges after the API server is stopped and restarted on the same port", async () => {
    const mut = await started();
    const { port, state } = envtest;
    await envtest.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(secretValueOf(mut, "shop")).toBe("a1");
    envtest = await startEnvtest({ port, state, bookmarkIntervalMs: 500 });
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "a-after-restart" });
    await untilValue(mut, "shop", "a-after-restart", 15_000);
  }, 20_000);
});
