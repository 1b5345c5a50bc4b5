import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { call, openWatch, putSecret, SETTLE, DEFAULT_WATCH as W } from "./helpers.ts";

let env: Envtest;
beforeEach(async () => {
  env = await startEnvtest();
});
afterEach(async () => {
  await env.close();
});

describe("watch faults", () => {
  it("drops every watch abruptly", async () => {
    const a = await openWatch(env, W);
    const b = await openWatch(env, "/api/v1/secrets?watch=true");
    await vi.waitFor(() => expect(env.openWatches).toBe(2), SETTLE);
    expect(env.faults.dropWatches()).toBe(2);
    expect(await a.ended).toBe("error");
    expect(await b.ended).toBe("error");
    expect(env.openWatches).toBe(0);
  });

  it("ends every watch cleanly", async () => {
    const a = await openWatch(env, W);
    await vi.waitFor(() => expect(env.openWatches).toBe(1), SETTLE);
    env.faults.endWatches();
    expect(await a.ended).toBe("end");
  });

  it("holds events while stalled, keeps the connection open, and releases them in order", async () => {
    const w = await openWatch(env, W);
    env.faults.stall(true);
    putSecret(env, "a");
    putSecret(env, "b");
    putSecret(env, "a");
    await new Promise((r) => setTimeout(r, 100));
    expect(w.lines).toEqual([]);
    expect(env.openWatches).toBe(1);
    env.faults.stall(false);
    expect((await w.take(3)).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      "ADDED a",
      "ADDED b",
      "MODIFIED a",
    ]);
    w.close();
  });

  it("loses held events when a stalled watch is dropped", async () => {
    const w = await openWatch(env, W);
    env.faults.stall(true);
    putSecret(env, "a");
    env.faults.dropWatches();
    env.faults.stall(false);
    expect(await w.ended).toBe("error");
    expect(w.lines).toEqual([]);
  });

  it("splits event lines across chunk boundaries in split mode, reproducibly", async () => {
    env.faults.chunking({ mode: "split", seed: 7 });
    const w = await openWatch(env, W);
    for (let i = 0; i < 5; i++) putSecret(env, `s${i}`);
    const events = await w.take(5);
    expect(events.map((e) => e.object.metadata.name)).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    expect(w.chunks.length).toBeGreaterThan(5);
    expect(w.chunks.some((c) => !c.toString().endsWith("\n"))).toBe(true);
    w.close();
  });

  it("coalesces several events into one write in coalesce mode", async () => {
    env.faults.chunking({ mode: "coalesce", seed: 3 });
    const w = await openWatch(env, W);
    for (let i = 0; i < 12; i++) putSecret(env, `s${i}`);
    await w.take(12);
    expect(w.chunks.some((c) => c.toString().split("\n").length > 2)).toBe(true);
    w.close();
  });

  it.each(["bytes", "truncated", "non-json"] as const)(
    "writes a %s garbage line into open watches and keeps them open",
    async (kind) => {
      const w = await openWatch(env, W);
      await vi.waitFor(() => expect(env.openWatches).toBe(1), SETTLE);
      expect(env.faults.injectGarbage(kind)).toBe(1);
      const bad = await w.nextLine();
      expect(() => JSON.parse(bad)).toThrow();
      putSecret(env, "after");
      expect((await w.next()).object.metadata.name).toBe("after");
      w.close();
    },
  );
});

describe("request faults", () => {
  it("fails the next N lists with 429 and Retry-After, then recovers", async () => {
    env.faults.failNext({ verb: "list", count: 2, status: 429, retryAfterSeconds: 3 });
    const get = await call(env, "GET", "/api/v1/namespaces/default/secrets/x");
    expect(get.status).toBe(404);
    for (let i = 0; i < 2; i++) {
      const res = await call(env, "GET", "/api/v1/secrets");
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("3");
      expect(res.json).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Too many requests, please try again later.",
        reason: "TooManyRequests",
        details: { retryAfterSeconds: 3 },
        code: 429,
      });
    }
    expect((await call(env, "GET", "/api/v1/secrets")).status).toBe(200);
  });

  it("fails the next watch with 500 InternalError", async () => {
    env.faults.failNext({ verb: "watch", count: 1, status: 500 });
    const res = await call(env, "GET", W);
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({
      reason: "InternalError",
      code: 500,
      message: "Internal error occurred: injected fault",
    });
  });

  it("adds latency to API responses", async () => {
    env.faults.setLatency(150);
    const started = Date.now();
    await call(env, "GET", "/api/v1/secrets");
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    env.faults.setLatency(0);
  });
});

describe("control path over HTTP", () => {
  it("drives the same faults and reads the request log", async () => {
    const fail = await call(env, "POST", "/__envtest/faults/fail", {
      verb: "get",
      count: 1,
      status: 503,
      retryAfterSeconds: 1,
    });
    expect(fail.json).toEqual({ ok: true });
    expect((await call(env, "GET", "/api/v1/namespaces/default/secrets/x")).status).toBe(503);
    const w = await openWatch(env, W);
    await vi.waitFor(() => expect(env.openWatches).toBe(1), SETTLE);
    expect((await call(env, "POST", "/__envtest/faults/drop-watches")).json).toEqual({
      ok: true,
      watches: 1,
    });
    expect(await w.ended).toBe("error");
    expect((await call(env, "POST", "/__envtest/faults/latency", { ms: -1 })).status).toBe(400);
    const log = (await call(env, "GET", "/__envtest/requests")).json as {
      items: { verb: string }[];
    };
    expect(log.items.map((e) => e.verb)).toEqual(["get", "watch"]);
    await call(env, "DELETE", "/__envtest/requests");
    expect(env.requests.entries()).toEqual([]);
    putSecret(env, "a");
    await call(env, "POST", "/__envtest/faults/compact");
    const old = await openWatch(env, `${W}&resourceVersion=1`);
    expect((await old.next()).object.code).toBe(410);
  });
});
