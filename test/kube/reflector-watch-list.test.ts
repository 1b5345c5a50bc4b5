import { describe, expect, it } from "vitest";
import type { ApiError } from "../../src/kube/cache/list-watch.ts";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import { ok } from "../../src/result.ts";
import { settle } from "../support/fake-clock.ts";
import { page, secret } from "../support/fake-list-watch.ts";
import { harness } from "../support/reflector-harness.ts";

/** A harness whose server serves streaming lists, with a memory of its own. */
const streaming = () => harness({ streamingLists: new StreamingLists() });

/** What kube-apiserver answers a streaming list while its WatchList feature gate is off. */
const gateOff: ApiError = {
  kind: "http",
  status: 422,
  reason: "Invalid",
  message:
    'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
};
/** What a server older than the parameter answers. */
const oldServer: ApiError = {
  kind: "http",
  status: 400,
  reason: "BadRequest",
  message: "unknown parameter",
};

const STREAM_FROM = (resourceVersion: string) => ({
  resourceVersion,
  timeoutSeconds: 1,
  sendInitialEvents: true,
});

describe("Reflector: streaming lists", () => {
  it("starts with a watch asking for the initial state, is synced at its end bookmark, and watches on", async () => {
    const h = streaming();
    await h.start();
    h.lw.current.add(secret("a", "5"));
    h.lw.current.add(secret("b", "7"));
    await settle();
    const before = { synced: h.reflector.hasSynced(), log: [...h.log] };
    h.lw.current.endInitialEvents("10");
    h.lw.current.modify(secret("a", "11"));
    await settle();
    expect({
      before,
      log: h.log,
      watches: h.lw.watches.map((w) => w.options),
      lists: h.lw.listCalls,
      listed: h.reported("listed"),
      from: h.reflector.lastSyncResourceVersion(),
    }).toEqual({
      before: { synced: false, log: ["ADDED default/a@5", "ADDED default/b@7"] },
      log: ["ADDED default/a@5", "ADDED default/b@7", "SYNCED", "MODIFIED default/a@11"],
      watches: [STREAM_FROM("")],
      lists: [],
      listed: [{ mode: "watch-list", resourceVersion: "10", items: 2 }],
      from: "11",
    });
  });

  it("is not synced by a bookmark without the initial-events-end annotation", async () => {
    const h = streaming();
    await h.start();
    h.lw.current.add(secret("a", "5"));
    h.lw.current.bookmark("8");
    await settle();
    const before = { synced: h.reflector.hasSynced(), from: h.reflector.lastSyncResourceVersion() };
    h.lw.current.endInitialEvents("9");
    await settle();
    expect({ before, synced: h.reflector.hasSynced(), log: h.log }).toEqual({
      before: { synced: false, from: "" },
      synced: true,
      log: ["ADDED default/a@5", "SYNCED"],
    });
  });

  it("starts a streaming list over after the list backoff when it drops before its end bookmark", async () => {
    const h = streaming();
    await h.start();
    h.lw.current.add(secret("a", "1"));
    h.lw.current.add(secret("b", "2"));
    h.lw.current.drop();
    await settle();
    expect(h.reported("backoff")).toEqual([{ delayMs: 800 }]);
    expect(h.reported("error")).toEqual([
      { phase: "list", error: { kind: "network", message: "socket hang up" } },
    ]);
    await h.clock.advance(800);
    // b was deleted meanwhile: the second stream does not hold it, and the list replaces the state.
    h.lw.current.add(secret("a", "1"));
    h.lw.current.endInitialEvents("12");
    await settle();
    expect({ log: h.log, watches: h.lw.watches.map((w) => w.options) }).toEqual({
      log: ["ADDED default/a@1", "ADDED default/b@2", "DELETED default/b@2", "SYNCED"],
      watches: [STREAM_FROM(""), STREAM_FROM("")],
    });
  });

  it("resumes a dropped watch from the last resourceVersion once synced, with no new initial events", async () => {
    const h = streaming();
    await h.start();
    h.lw.current.add(secret("a", "1"));
    h.lw.current.endInitialEvents("10");
    h.lw.current.modify(secret("a", "11"));
    h.lw.current.drop();
    await settle();
    h.lw.current.modify(secret("a", "12"));
    await settle();
    expect({
      log: h.log,
      watches: h.lw.watches.map((w) => w.options),
      listed: h.reported("listed").length,
      backoff: h.reported("backoff"),
    }).toEqual({
      log: ["ADDED default/a@1", "SYNCED", "MODIFIED default/a@11", "MODIFIED default/a@12"],
      watches: [STREAM_FROM(""), { resourceVersion: "11", timeoutSeconds: 1 }],
      listed: 1,
      backoff: [],
    });
  });

  it("streams again after 410 Gone, from the last resourceVersion, and deletes what the new state lacks", async () => {
    const h = streaming();
    await h.start();
    h.lw.current.add(secret("a", "1"));
    h.lw.current.add(secret("b", "2"));
    h.lw.current.endInitialEvents("10");
    h.lw.current.error({ code: 410, reason: "Expired", message: "too old resource version" });
    await settle();
    h.lw.current.add(secret("a", "15"));
    h.lw.current.endInitialEvents("20");
    await settle();
    expect({
      log: h.log,
      watches: h.lw.watches.map((w) => w.options),
      lists: h.lw.listCalls,
      relists: h.reported("relist"),
      listed: h.reported("listed"),
    }).toEqual({
      log: [
        "ADDED default/a@1",
        "ADDED default/b@2",
        "SYNCED",
        "MODIFIED default/a@15",
        "DELETED default/b@2",
      ],
      watches: [STREAM_FROM(""), STREAM_FROM("10")],
      lists: [],
      relists: [{ reason: "expired" }],
      listed: [
        { mode: "watch-list", resourceVersion: "10", items: 2 },
        { mode: "watch-list", resourceVersion: "20", items: 1 },
      ],
    });
  });

  it("streams from the latest state at once when the last resourceVersion cannot be served", async () => {
    const h = streaming();
    await h.start();
    h.lw.current.endInitialEvents("10");
    await settle();
    h.lw.failWatch({
      kind: "http",
      status: 504,
      reason: "Timeout",
      message: "Too large resource version: 10, current: 4",
    });
    h.lw.current.error({ code: 410 });
    await settle();
    expect({
      watches: h.lw.watches.map((w) => w.options),
      backoff: h.reported("backoff"),
    }).toEqual({ watches: [STREAM_FROM(""), STREAM_FROM("")], backoff: [] });
  });

  it("waits the Retry-After of a 429 before streaming again", async () => {
    const h = streaming();
    h.lw.failWatch({ kind: "http", status: 429, message: "slow down", retryAfterSeconds: 3 });
    await h.start();
    expect(h.reported("backoff")).toEqual([{ delayMs: 3000 }]);
    await h.clock.advance(2999);
    expect(h.lw.watches).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.lw.watches.map((w) => w.options)).toEqual([STREAM_FROM("")]);
  });

  it.each([
    ["422 (the WatchList feature gate off)", gateOff],
    ["400 (an older server)", oldServer],
  ])("falls back on %s to a paged list at once, reporting it once", async (_, refusal) => {
    const h = streaming();
    h.lw.failWatch(refusal);
    h.lw.replyList(ok(page("10", [secret("a", "1")])));
    await h.start();
    expect({
      statuses: h.statuses,
      lists: h.lw.listCalls,
      watches: h.lw.watches.map((w) => w.options),
      log: h.log,
    }).toEqual({
      statuses: [
        { kind: "streaming-refused", error: refusal },
        { kind: "listed", mode: "list", resourceVersion: "10", items: 1, pages: 1 },
      ],
      lists: [{ resourceVersion: "0" }],
      watches: [{ resourceVersion: "10", timeoutSeconds: 1 }],
      log: ["ADDED default/a@1", "SYNCED"],
    });
  });

  it("remembers a refusal for every reflector that shares the memory, and for its relists", async () => {
    const shared = new StreamingLists();
    const first = harness({ streamingLists: shared });
    first.lw.failWatch(gateOff);
    first.lw.replyList(ok(page("10", [secret("a", "1")])), ok(page("20", [])));
    await first.start();
    first.lw.current.error({ code: 410 });
    await settle();
    const second = harness({ streamingLists: shared });
    second.lw.replyList(ok(page("30", [])));
    await second.start();
    expect({
      first: { lists: first.lw.listCalls, watches: first.lw.watches.map((w) => w.options) },
      second: { lists: second.lw.listCalls, statuses: second.statuses },
      refusal: shared.refusal,
    }).toEqual({
      first: {
        lists: [{ resourceVersion: "0" }, { resourceVersion: "10" }],
        watches: [
          { resourceVersion: "10", timeoutSeconds: 1 },
          { resourceVersion: "20", timeoutSeconds: 1 },
        ],
      },
      second: {
        lists: [{ resourceVersion: "0" }],
        statuses: [{ kind: "listed", mode: "list", resourceVersion: "30", items: 0, pages: 1 }],
      },
      refusal: gateOff,
    });
  });
});
