import { describe, expect, it } from "vitest";
import { err, ok } from "../../src/result.ts";
import { settle } from "../support/fake-clock.ts";
import { gone, page, secret } from "../support/fake-list-watch.ts";
import { harness } from "../support/reflector-harness.ts";

/** What an API server whose watch cache is behind answers a list at a newer version. */
const tooLarge = {
  kind: "http",
  status: 504,
  reason: "Timeout",
  message: "Too large resource version: 12, current: 10",
} as const;

describe("Reflector: list, then watch", () => {
  it("delivers the list as ADDED, reports synced once, then watches from the list's resourceVersion", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [secret("a", "5"), secret("b", "7")])));
    expect(h.reflector.hasSynced()).toBe(false);

    await h.start();

    expect(h.log).toEqual(["ADDED default/a@5", "ADDED default/b@7", "SYNCED"]);
    expect(h.reflector.hasSynced()).toBe(true);
    expect(h.reflector.lastSyncResourceVersion()).toBe("10");
    // The first list asks for any recent state: the API server's watch cache serves it whole.
    expect(h.lw.listCalls).toEqual([{ resourceVersion: "0" }]);
    expect(h.lw.watches.map((w) => w.options)).toEqual([
      { resourceVersion: "10", timeoutSeconds: 1 },
    ]);
    expect(h.reported("listed")).toEqual([
      { mode: "list", resourceVersion: "10", items: 2, pages: 1 },
    ]);
  });

  it("is not synced while the first list is failing", async () => {
    const h = harness();
    h.lw.replyList(err({ kind: "network", message: "connect ECONNREFUSED" }));
    await h.start();
    expect(h.reflector.hasSynced()).toBe(false);
    expect(h.log).toEqual([]);
    expect(h.reported("error")).toEqual([
      { phase: "list", error: { kind: "network", message: "connect ECONNREFUSED" } },
    ]);
  });

  it("falls back at once to a consistent read when a version cannot be served, paging it with limit and continue", async () => {
    const h = harness({ pageSize: 2 });
    h.lw.replyList(
      err(tooLarge),
      ok(page("10", [secret("a", "1"), secret("b", "2")], "tok-1")),
      ok(page("10", [secret("c", "3")])),
    );
    await h.start();
    expect({
      lists: h.lw.listCalls,
      log: h.log,
      watchFrom: h.lw.current.options.resourceVersion,
    }).toEqual({
      lists: [{ resourceVersion: "0" }, { limit: 2 }, { limit: 2, continue: "tok-1" }],
      log: ["ADDED default/a@1", "ADDED default/b@2", "ADDED default/c@3", "SYNCED"],
      watchFrom: "10",
    });
    expect(h.reported("backoff")).toEqual([]);
  });

  it("relists from the last synced version, and after a consistent read returns to it", async () => {
    const h = harness();
    h.lw.replyList(
      ok(page("10", [secret("a", "5")])),
      err(gone),
      ok(page("20", [secret("a", "5")])),
      ok(page("30", [])),
    );
    await h.start();
    h.lw.current.error({ code: 410 });
    await settle();
    h.lw.current.error({ code: 410 });
    await settle();
    await h.clock.runNext(); // a second quick, empty end backs off
    // A relist may not go back in time: not older than what was delivered ("10"); when the
    // server cannot serve that, the latest state, read consistently; then "20" again.
    expect(h.lw.listCalls).toEqual([
      { resourceVersion: "0" },
      { resourceVersion: "10" },
      { limit: 500 },
      { resourceVersion: "20" },
    ]);
    expect(h.log).toEqual(["ADDED default/a@5", "SYNCED", "DELETED default/a@5"]);
  });

  it("starts over with one unpaged list when the continue token has expired", async () => {
    const h = harness({ pageSize: 2 });
    h.lw.replyList(
      err(tooLarge),
      ok(page("10", [secret("a", "1"), secret("b", "2")], "tok-1")),
      err(gone),
      ok(page("15", [secret("a", "1"), secret("b", "12"), secret("d", "14")])),
    );
    await h.start();
    expect(h.reported("relist")).toEqual([{ reason: "continue-expired" }]);
    expect({
      lists: h.lw.listCalls,
      log: h.log,
      watchFrom: h.lw.current.options.resourceVersion,
    }).toEqual({
      lists: [{ resourceVersion: "0" }, { limit: 2 }, { limit: 2, continue: "tok-1" }, {}],
      log: [
        "ADDED default/a@1",
        "ADDED default/b@2",
        "MODIFIED default/b@12",
        "ADDED default/d@14",
        "SYNCED",
      ],
      watchFrom: "15",
    });
  });

  it("delivers watch events in order and advances the resourceVersion with each", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [secret("a", "5")])));
    await h.start();
    h.lw.current.add(secret("b", "11"));
    h.lw.current.modify(secret("a", "12"));
    h.lw.current.delete(secret("b", "13"));
    await settle();
    expect(h.log).toEqual([
      "ADDED default/a@5",
      "SYNCED",
      "ADDED default/b@11",
      "MODIFIED default/a@12",
      "DELETED default/b@13",
    ]);
    expect(h.reflector.lastSyncResourceVersion()).toBe("13");
  });
});

describe("Reflector: resuming and relisting", () => {
  it("resumes from the bookmark's resourceVersion after the server ends the watch, without relisting", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    await h.clock.advance(1_000);
    h.lw.current.bookmark("20");
    h.lw.current.end();
    await settle();
    expect(h.lw.watches.map((w) => w.options.resourceVersion)).toEqual(["10", "20"]);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.reported("watch-restart")).toEqual([
      { reason: "timeout", resourceVersion: "20", events: 1 },
    ]);
    expect(h.reported("backoff")).toEqual([]);
  });

  it("resumes from the last event after the connection drops mid-stream", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])));
    await h.start();
    h.lw.current.add(secret("a", "11"));
    h.lw.current.drop("read ECONNRESET");
    await settle();
    expect(h.lw.watches.map((w) => w.options.resourceVersion)).toEqual(["10", "11"]);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.reported("watch-restart")).toEqual([
      { reason: "dropped", resourceVersion: "11", events: 1 },
    ]);
    expect(h.reported("error")).toEqual([
      { phase: "watch", error: { kind: "network", message: "read ECONNRESET" } },
    ]);
  });

  it("relists on a 410 ERROR event, delivering only changes and DELETED for keys missing from the new list", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [secret("a", "5"), secret("b", "7"), secret("c", "8")])));
    await h.start();
    h.lw.current.modify(secret("b", "9"));
    h.lw.current.error({
      code: 410,
      reason: "Expired",
      message: "too old resource version: 9 (25)",
    });
    h.lw.replyList(ok(page("30", [secret("a", "5"), secret("b", "12"), secret("d", "13")])));
    await settle();
    expect(h.log).toEqual([
      "ADDED default/a@5",
      "ADDED default/b@7",
      "ADDED default/c@8",
      "SYNCED",
      "MODIFIED default/b@9",
      "MODIFIED default/b@12",
      "ADDED default/d@13",
      "DELETED default/c@8",
    ]);
    expect(h.reported("relist")).toEqual([{ reason: "expired" }]);
    expect(h.reported("watch-restart")).toEqual([
      { reason: "expired", resourceVersion: "9", events: 1 },
    ]);
    expect(h.lw.watches.map((w) => w.options.resourceVersion)).toEqual(["10", "30"]);
    expect(h.reflector.lastSyncResourceVersion()).toBe("30");
  });

  it("resumed, reads what it was seeded with only once it needs it, then relists against it", async () => {
    const h = harness();
    h.lw.replyList(ok(page("30", [secret("a", "5"), secret("b", "12"), secret("d", "13")])));
    const seeded: (readonly [string, string])[] = [
      ["default/a", "5"],
      ["default/b", "7"],
      ["default/c", "8"],
    ];
    let reads = 0;
    const known = {
      *[Symbol.iterator]() {
        reads++;
        yield* seeded;
      },
    };
    h.reflector.start({ resourceVersion: "10", known });
    await settle();
    const readsAtStart = reads;
    h.lw.current.modify(secret("b", "9"));
    h.lw.current.error({ code: 410, reason: "Expired", message: "too old resource version" });
    await settle();
    expect({
      reads: [readsAtStart, reads],
      log: h.log,
      watches: h.lw.watches.map((w) => w.options.resourceVersion),
    }).toEqual({
      reads: [0, 1],
      log: [
        "SYNCED",
        "MODIFIED default/b@9",
        "MODIFIED default/b@12",
        "ADDED default/d@13",
        "DELETED default/c@8",
      ],
      watches: ["10", "30"],
    });
  });

  it("relists when the watch request itself answers 410", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [secret("a", "5")])), ok(page("40", [])));
    h.lw.failWatch(gone);
    await h.start();
    expect(h.log).toEqual(["ADDED default/a@5", "SYNCED", "DELETED default/a@5"]);
    expect(h.lw.listCalls).toHaveLength(2);
    expect(h.lw.current.options.resourceVersion).toBe("40");
  });

  it("spreads a relist after 410 over the relist spread, then lists", async () => {
    const h = harness({ random: () => 0.25, relistSpreadMs: 8_000 });
    h.lw.replyList(ok(page("10", [])), ok(page("40", [])));
    h.lw.failWatch(gone);
    await h.start();
    expect(h.reported("backoff")).toEqual([{ delayMs: 2_000 }]);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.clock.runNext();
    expect(h.lw.listCalls).toHaveLength(2);
  });

  it("calls onSynced only for the first list", async () => {
    const h = harness();
    h.lw.replyList(ok(page("10", [])), ok(page("20", [])));
    await h.start();
    h.lw.current.error({ code: 410 });
    await settle();
    expect(h.log).toEqual(["SYNCED"]);
    expect(h.lw.listCalls).toHaveLength(2);
  });
});

describe("Reflector: handler failures", () => {
  it("reports a throwing handler and keeps delivering", async () => {
    const h = harness({
      handler: {
        onEvent: ({ object }) => {
          if (object.metadata.name === "bad") throw new Error("handler bug");
          seen.push(object.metadata.name);
        },
        onSynced: () => {
          throw new Error("sync bug");
        },
      },
    });
    const seen: string[] = [];
    h.lw.replyList(ok(page("10", [secret("bad", "1"), secret("a", "2")])));
    await h.start();
    h.lw.current.add(secret("bad", "3"));
    h.lw.current.add(secret("b", "4"));
    await settle();
    expect(seen).toEqual(["a", "b"]);
    expect(h.reflector.hasSynced()).toBe(true);
    expect(h.reported("handler-error")).toEqual([
      { event: "ADDED", key: "default/bad", error: new Error("handler bug") },
      { event: "SYNCED", error: new Error("sync bug") },
      { event: "ADDED", key: "default/bad", error: new Error("handler bug") },
    ]);
    expect(h.lw.watches).toHaveLength(1);
  });
});
