import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clientToken, type Envtest, type EnvtestOptions, startEnvtest } from "../src/index.ts";
import { call, openWatch, SETTLE } from "./helpers.ts";

let env: Envtest;
async function start(options: EnvtestOptions = {}) {
  env = await startEnvtest(options);
  return env;
}
afterEach(async () => {
  await env.close();
});

const W = "/api/v1/namespaces/default/secrets?watch=true";
const as = (client: string) => ({ authorization: `Bearer ${clientToken(client)}` });

/** The entries without the fields that vary from run to run. */
function stable() {
  return env.requests.entries().map(({ time, durationMs, userAgent, ...rest }) => {
    expect(time).toBeGreaterThan(0);
    return rest;
  });
}

describe("request log entries", () => {
  it("records who asked what, the answer's status, objects and bytes", async () => {
    await start();
    env.apply({ namespace: "default", name: "a", data: { v: "1" } });
    env.apply({ namespace: "default", name: "b", data: { v: "2" } });
    const list = await call(
      env,
      "GET",
      "/api/v1/namespaces/default/secrets?limit=5&labelSelector=x%21%3Dy&resourceVersion=0",
      undefined,
      as("replica-7"),
    );
    const created = await call(env, "POST", "/api/v1/namespaces/default/secrets", {
      metadata: { name: "x" },
    });
    const patched = await call(env, "PATCH", "/api/v1/namespaces/default/secrets/x", "{}", {
      "content-type": "application/merge-patch+json",
      "user-agent": "kubectl/v1.32.0",
    });
    const missing = await call(env, "GET", "/api/v1/namespaces/default/secrets/nope");
    const bytes = (r: { text: string }) => Buffer.byteLength(r.text);
    const path = "/api/v1/namespaces/default/secrets";
    const scope = { resource: "secrets", namespace: "default" };
    expect(stable()).toEqual([
      {
        method: "GET",
        path,
        query: { limit: "5", labelSelector: "x!=y", resourceVersion: "0" },
        verb: "list",
        ...scope,
        client: "replica-7",
        labelSelector: "x!=y",
        resourceVersion: "0",
        limit: "5",
        listRead: "cache",
        status: 200,
        objects: 2,
        bytes: bytes(list),
      },
      {
        method: "POST",
        path,
        query: {},
        verb: "create",
        ...scope,
        client: "node",
        contentType: "application/json",
        status: 201,
        objects: 1,
        bytes: bytes(created),
      },
      {
        method: "PATCH",
        path: `${path}/x`,
        query: {},
        verb: "patch",
        ...scope,
        name: "x",
        client: "kubectl/v1.32.0",
        contentType: "application/merge-patch+json",
        status: 200,
        objects: 1,
        bytes: bytes(patched),
      },
      {
        method: "GET",
        path: `${path}/nope`,
        query: {},
        verb: "get",
        ...scope,
        name: "nope",
        client: "node",
        status: 404,
        objects: 0,
        bytes: bytes(missing),
      },
    ]);
    expect(env.requests.entries().every((e) => (e.durationMs ?? -1) >= 0)).toBe(true);
    env.requests.clear();
    expect(env.requests.entries()).toEqual([]);
  });

  it("counts a watch's events and bytes as they are written, and its duration once it ends", async () => {
    await start();
    env.apply({ namespace: "default", name: "a" });
    const w = await openWatch(env, `${W}&resourceVersion=0&allowWatchBookmarks=true`, as("r1"));
    await w.take(1);
    env.apply({ namespace: "default", name: "b" });
    env.delete("default", "a");
    await w.take(2);
    const [open] = env.requests.entries();
    expect(open).toMatchObject({ verb: "watch", client: "r1", status: 200, objects: 3 });
    expect(open?.bytes).toBe(w.lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
    expect(open?.durationMs).toBeUndefined();
    env.faults.endWatches();
    await w.ended;
    await vi.waitFor(
      () => expect(env.requests.entries()[0]?.durationMs).toBeGreaterThan(0),
      SETTLE,
    );
    expect(env.requests.summary().byClient.r1?.watch).toMatchObject({
      objects: 3,
      bytes: open?.bytes,
    });
  });

  it("records the code of the ERROR event a watch ended with", async () => {
    await start();
    const old = env.apply({ namespace: "default", name: "a" }).metadata.resourceVersion;
    env.apply({ namespace: "default", name: "a", data: { v: "2" } });
    env.faults.compact();
    const w = await openWatch(env, `${W}&resourceVersion=${old}`, as("r1"));
    const [event] = await w.take(1);
    expect(event).toMatchObject({ type: "ERROR", object: { code: 410 } });
    await w.ended;
    await vi.waitFor(
      () => expect(env.requests.entries()[0]?.durationMs).toBeGreaterThanOrEqual(0),
      SETTLE,
    );
    expect(env.requests.entries()[0]).toMatchObject({
      verb: "watch",
      status: 200,
      objects: 0,
      watchError: 410,
    });
    expect(env.requests.summary().byClient.r1?.watch?.watchErrors).toEqual({ 410: 1 });
    expect(env.requests.summary().byVerb.watch?.watchErrors).toEqual({ 410: 1 });
  });

  it("identifies the client of a per-client kubeconfig used by client-node", async () => {
    await start();
    const kc = new KubeConfig();
    kc.loadFromString(env.kubeconfig({ client: "replica-42" }));
    await kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: "default" });
    expect(env.requests.entries().map((e) => [e.client, e.verb, e.listRead])).toEqual([
      ["replica-42", "list", "consistent"],
    ]);
  });

  it("keeps the newest entries up to its cap, and counts every request in the summary", async () => {
    await start({ requestLog: { keep: 3 } });
    for (let i = 0; i < 5; i++) await call(env, "GET", `/api/v1/namespaces/default/secrets/s${i}`);
    expect(env.requests.entries().map((e) => e.name)).toEqual(["s2", "s3", "s4"]);
    const s = env.requests.summary();
    expect(s.byVerb.get?.requests).toBe(5);
    expect(s.entriesDropped).toBe(2);
  });
});

describe("request summary", () => {
  it("totals per verb and per client, with requests per second", async () => {
    let now = 1_700_000_000_000;
    await start({ requestLog: { now: () => now } });
    await call(env, "GET", "/api/v1/secrets", undefined, as("a"));
    await call(env, "GET", "/api/v1/secrets?resourceVersion=0", undefined, as("b"));
    now += 2_000;
    await call(env, "GET", "/api/v1/namespaces/default/secrets/x", undefined, as("a"));
    const s = env.requests.summary();
    const list = (bytes: number, read: "consistent" | "cache") => ({
      requests: 1,
      objects: 0,
      bytes,
      statuses: { 200: 1 },
      durationMs: 0,
      listReads: { [read]: 1 },
    });
    const empty = Buffer.byteLength(
      `{"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`,
    );
    expect(s.byClient).toEqual({
      a: {
        list: list(empty, "consistent"),
        get: {
          requests: 1,
          objects: 0,
          bytes: expect.any(Number),
          statuses: { 404: 1 },
          durationMs: 0,
          listReads: {},
        },
      },
      b: { list: list(empty, "cache") },
    });
    expect(s.byVerb.list).toMatchObject({ requests: 2, listReads: { consistent: 1, cache: 1 } });
    expect(s.perSecond).toEqual([
      { second: 1_700_000_000, requests: 2, byVerb: { list: 2 } },
      { second: 1_700_000_001, requests: 0, byVerb: {} },
      { second: 1_700_000_002, requests: 1, byVerb: { get: 1 } },
    ]);
    expect(s.since).toBe(1_700_000_000_000);
  });

  it("reports the peak number of lists in flight", async () => {
    await start();
    env.faults.setLatency(150);
    await Promise.all(Array.from({ length: 4 }, () => call(env, "GET", "/api/v1/secrets")));
    await call(env, "GET", "/api/v1/secrets");
    const s = env.requests.summary();
    expect([s.peakListsInFlight, s.listsInFlight]).toEqual([4, 0]);
    env.requests.clear();
    expect(env.requests.summary().peakListsInFlight).toBe(0);
  });

  it("serves the summary and the entries on the control path", async () => {
    await start();
    await call(env, "GET", "/api/v1/secrets", undefined, as("fleet-1"));
    const summary = await call(env, "GET", "/__envtest/requests/summary");
    expect(summary.json).toEqual(JSON.parse(JSON.stringify(env.requests.summary())));
    expect(Object.keys((summary.json as { byClient: object }).byClient)).toEqual(["fleet-1"]);
    const log = (await call(env, "GET", "/__envtest/requests")).json as { items: unknown[] };
    expect(log.items).toHaveLength(1);
  });
});
