import { describe, expect, it } from "vitest";
import type { ApiError } from "../../src/kube/cache/list-watch.ts";
import { err, ok } from "../../src/result.ts";
import { settle } from "../support/fake-clock.ts";
import { page, secret } from "../support/fake-list-watch.ts";
import { harness } from "../support/reflector-harness.ts";

const refused: ApiError = { kind: "network", message: "connect ECONNREFUSED 127.0.0.1:6443" };
const unavailable: ApiError = { kind: "http", status: 503, message: "service unavailable" };

describe("Reflector: backoff", () => {
  it("backs off failed lists exponentially from 800 ms, capped at 30 s including jitter", async () => {
    const h = harness({ random: () => 0 });
    h.lw.replyList(...Array.from({ length: 8 }, () => err(refused)));
    await h.start();
    for (let i = 0; i < 7; i += 1) await h.clock.runNext();
    // random() = 0: the bare base, which stops growing at cap / (1 + jitter).
    expect(h.reported("backoff").map((b) => b.delayMs)).toEqual([
      800, 1_600, 3_200, 6_400, 12_800, 15_000, 15_000, 15_000,
    ]);
    expect(h.reflector.hasSynced()).toBe(false);
  });

  it("spreads each delay over [base, 2 * base) with jitter, never past the cap", async () => {
    const h = harness({ random: () => 0.999 });
    h.lw.replyList(...Array.from({ length: 7 }, () => err(refused)));
    await h.start();
    for (let i = 0; i < 6; i += 1) await h.clock.runNext();
    expect(h.reported("backoff").map((b) => Math.round(b.delayMs))).toEqual([
      1_599, 3_198, 6_397, 12_794, 25_587, 29_985, 29_985,
    ]);
  });

  it("recovers: the list succeeds after the failures and the watch starts", async () => {
    const h = harness();
    h.lw.replyList(err(refused), err(unavailable), ok(page("10", [secret("a", "1")])));
    await h.start();
    await h.clock.runNext();
    await h.clock.runNext();
    expect(h.log).toEqual(["ADDED default/a@1", "SYNCED"]);
    expect(h.lw.watches).toHaveLength(1);
  });

  it("waits exactly Retry-After on 429, and the throttled attempt does not grow the backoff", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    h.lw.failWatch({
      kind: "http",
      status: 429,
      message: "too many requests",
      retryAfterSeconds: 5,
    });
    h.lw.failWatch({ kind: "http", status: 429, message: "too many requests" });
    await h.start();
    expect(h.reported("backoff")).toEqual([{ delayMs: 5_000 }]);
    expect(h.reported("watch-restart")).toEqual([
      { reason: "throttled", resourceVersion: "10", events: 0 },
    ]);
    await h.clock.runNext();
    // A 429 without Retry-After backs off from where the earlier failures left the backoff.
    expect(h.reported("backoff")).toEqual([{ delayMs: 5_000 }, { delayMs: 800 }]);
    await h.clock.runNext();
    expect(h.lw.watches).toHaveLength(1);
    expect(h.lw.listCalls).toHaveLength(1);
  });

  it("honours Retry-After exactly however far earlier failures grew the backoff", async () => {
    const h = harness();
    const throttled: ApiError = {
      kind: "http",
      status: 429,
      message: "too many requests",
      retryAfterSeconds: 1,
    };
    h.lw.replyList(
      ...Array.from({ length: 5 }, () => err(unavailable)),
      err(throttled),
      err(throttled),
      ok(page("10", [])),
    );
    await h.start();
    for (let i = 0; i < 7; i += 1) await h.clock.runNext();
    expect(h.reported("backoff").map((b) => b.delayMs)).toEqual([
      800, 1_600, 3_200, 6_400, 12_800, 1_000, 1_000,
    ]);
    expect(h.reflector.hasSynced()).toBe(true);
  });

  it("honours a 503's Retry-After, as an API server starting up sends it", async () => {
    const h = harness();
    h.lw.replyList(err({ ...unavailable, retryAfterSeconds: 2 }), ok(page("10", [])));
    await h.start();
    await h.clock.runNext();
    expect(h.reported("backoff")).toEqual([{ delayMs: 2_000 }]);
    expect(h.reflector.hasSynced()).toBe(true);
  });

  it("retries a failing watch request from the same resourceVersion without relisting", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    h.lw.failWatch(refused);
    h.lw.failWatch(unavailable);
    await h.start();
    await h.clock.runNext();
    await h.clock.runNext();
    expect(h.reported("watch-restart").map((r) => r.reason)).toEqual(["error", "error"]);
    expect(h.reported("backoff")).toEqual([{ delayMs: 800 }, { delayMs: 1_600 }]);
    expect(h.lw.current.options.resourceVersion).toBe("10");
    expect(h.lw.listCalls).toHaveLength(1);
  });

  it("backs off an ERROR event other than 410, then resumes", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    h.lw.current.error({ code: 500, reason: "InternalError", message: "etcd leader changed" });
    await settle();
    expect(h.reported("error")).toEqual([
      {
        phase: "watch",
        error: {
          kind: "http",
          status: 500,
          reason: "InternalError",
          message: "etcd leader changed",
        },
      },
    ]);
    expect(h.reported("backoff")).toEqual([{ delayMs: 800 }]);
    await h.clock.runNext();
    expect(h.lw.watches.map((w) => w.options.resourceVersion)).toEqual(["10", "10"]);
  });

  it("starts again from 800 ms once healthy for the reset period", async () => {
    const h = harness({ backoff: { resetAfterMs: 10_000 } });
    h.lw.replyList(err(refused), err(refused), ok(page("10", [])), err(refused));
    await h.start();
    await h.clock.runNext();
    await h.clock.runNext();
    // Healthy since the list; bookmarks keep the watch alive past the reset period.
    for (let t = 0; t < 10; t += 1) {
      await h.clock.advance(1_000);
      h.lw.current.bookmark(String(11 + t));
    }
    h.lw.current.error({ code: 500 });
    await settle();
    expect(h.reported("backoff").map((b) => b.delayMs)).toEqual([800, 1_600, 800]);
  });

  it("backs off a watch that keeps closing at once with no events, the first one being free", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    h.lw.current.end();
    await settle();
    expect(h.lw.watches).toHaveLength(2);
    expect(h.reported("backoff")).toEqual([]);
    h.lw.current.end();
    await settle();
    expect(h.reported("backoff")).toEqual([{ delayMs: 800 }]);
    expect(h.reported("watch-restart").map((r) => r.reason)).toEqual(["closed", "closed"]);
  });
});

describe("Reflector: inactivity deadline", () => {
  it("tears down a watch silent for timeoutSeconds + grace and resumes without relisting", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    // timeoutSeconds 1 (random 0) + grace max(1 s, T/10) = 2 s.
    await h.clock.advance(1_999);
    expect(h.lw.current.closed).toBe(false);
    await h.clock.advance(1);
    expect(h.lw.watches.map((w) => w.closed)).toEqual([true, false]);
    expect(h.lw.watches.map((w) => w.options.resourceVersion)).toEqual(["10", "10"]);
    expect(h.reported("watch-restart")).toEqual([
      { reason: "inactive", resourceVersion: "10", events: 0 },
    ]);
    expect(h.reported("backoff")).toEqual([]);
    expect(h.lw.listCalls).toHaveLength(1);
  });

  it("counts every event and bookmark as activity", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    await h.clock.advance(1_500);
    h.lw.current.bookmark("11");
    await h.clock.advance(1_999);
    expect(h.lw.watches).toHaveLength(1);
    await h.clock.advance(1);
    expect(h.lw.watches).toHaveLength(2);
    expect(h.lw.current.options.resourceVersion).toBe("11");
  });

  it("scales the deadline with the randomised timeout: [T, 2T) plus a grace of T/10", async () => {
    const h = harness({ watchTimeoutSeconds: 300, random: () => 0.5 });
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    expect(h.lw.current.options.timeoutSeconds).toBe(450);
    await h.clock.advance(479_999);
    expect(h.lw.watches).toHaveLength(1);
    await h.clock.advance(1);
    expect(h.lw.watches).toHaveLength(2);
  });

  it("gives up on a watch request whose headers never arrive, and backs off", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    h.lw.hangWatch();
    await h.start();
    await h.clock.advance(2_000);
    expect(h.reported("watch-restart")).toEqual([
      { reason: "inactive", resourceVersion: "10", events: 0 },
    ]);
    expect(h.reported("backoff")).toEqual([{ delayMs: 800 }]);
    await h.clock.runNext();
    expect(h.lw.watches).toHaveLength(1);
  });

  it("aborts a list page that receives nothing for the request timeout", async () => {
    const h = harness({ requestTimeoutMs: 5_000 });
    await h.start();
    await h.clock.advance(5_000);
    expect(h.reported("error")).toEqual([
      { phase: "list", error: { kind: "network", message: "no data for 5000 ms" } },
    ]);
    expect(h.lw.signals[0]?.aborted).toBe(true);
  });
});

describe("Reflector: malformed lines", () => {
  it("restarts from the last good resourceVersion at once, backs off when it repeats, relists at the third", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [secret("a", "5")])));
    await h.start();
    h.lw.current.modify(secret("a", "11"));
    h.lw.current.malformed();
    await settle();
    expect(h.lw.watches.map((w) => w.options.resourceVersion)).toEqual(["10", "11"]);
    expect(h.reported("backoff")).toEqual([]);

    h.lw.current.malformed();
    await settle();
    expect(h.reported("backoff")).toEqual([{ delayMs: 800 }]);
    await h.clock.runNext();
    expect(h.lw.watches).toHaveLength(3);

    h.lw.replyList(ok(page("20", [secret("a", "11")])));
    h.lw.current.malformed();
    await settle();
    await h.clock.runNext();
    expect(h.reported("backoff")).toEqual([{ delayMs: 800 }, { delayMs: 1_600 }]);
    expect(h.reported("relist")).toEqual([{ reason: "decode" }]);
    expect(h.lw.listCalls).toHaveLength(2);
    expect(h.lw.current.options.resourceVersion).toBe("20");
    expect(h.reported("watch-restart").map((r) => r.reason)).toEqual([
      "decode",
      "decode",
      "decode",
    ]);
    expect(h.log).toEqual(["ADDED default/a@5", "SYNCED", "MODIFIED default/a@11"]);
  });
});

describe("Reflector: stop", () => {
  it("aborts a list in flight and leaves no timer", async () => {
    const h = harness();
    await h.start();
    expect(h.clock.pending()).toEqual([60_000]);
    await h.reflector.stop();
    expect(h.lw.signals.map((s) => s.aborted)).toEqual([true]);
    expect(h.clock.pending()).toEqual([]);
  });

  it("closes the open watch and leaves no timer", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    expect(h.clock.pending()).toEqual([2_000]);
    await h.reflector.stop();
    expect(h.lw.current.closed).toBe(true);
    expect(h.clock.pending()).toEqual([]);
  });

  it("ends a backoff sleep at once", async () => {
    const h = harness();
    h.lw.replyList(err(refused));
    await h.start();
    expect(h.clock.pending()).toEqual([800]);
    await h.reflector.stop();
    expect(h.clock.pending()).toEqual([]);
    expect(h.lw.listCalls).toHaveLength(1);
  });

  it("aborts a watch request waiting for headers", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    h.lw.hangWatch();
    await h.start();
    await h.reflector.stop();
    expect(h.lw.signals.map((s) => s.aborted)).toEqual([false, true]);
    expect(h.clock.pending()).toEqual([]);
  });

  it("delivers nothing after stop and does not start again", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    await h.reflector.stop();
    h.reflector.start();
    await settle();
    expect(h.lw.watches).toHaveLength(1);
    expect(h.log).toEqual(["SYNCED"]);
  });
});
