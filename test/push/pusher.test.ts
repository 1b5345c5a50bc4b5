import { describe, expect, it } from "vitest";
import type { PushObserver } from "../../src/push/observer.ts";
import { MAX_DROPPED_VERIFICATIONS, startPusher } from "../../src/push/pusher.ts";
import type { PushFailure, PushOptions, PushTarget, VerifyOptions } from "../../src/push/target.ts";
import { err, ok, type Result } from "../../src/result.ts";
import type { RouteView, Snapshot } from "../../src/snapshot/types.ts";
import { FakeClock, settle } from "../support/fake-clock.ts";
import { snapshotOf } from "../support/world.ts";

const INTERVAL = 250;
const VERIFY = 4 * INTERVAL;

/** The fake's digest of a table: its revision and hostnames. */
const digestOf = (view: RouteView): string =>
  JSON.stringify([view.revision, ...view.routes.exact.keys()]);

/** A proxy in memory: the table it holds, pushes that can be held open, faults on demand. */
class FakeProxy implements PushTarget {
  readonly name = "fake";
  table: RouteView | null = null;
  /** Revisions of the pushes begun, in order. */
  readonly pushes: number[] = [];
  /** Whether each push was asked to be whole. */
  readonly wholes: boolean[] = [];
  checks = 0;
  verifications = 0;
  /** Whether each verification was asked to be deep. */
  readonly deeps: boolean[] = [];
  inFlight = 0;
  maxInFlight = 0;
  down = false;
  /** When set, verifications time out (version checks still answer). */
  slowToVerify = false;
  /** When set, pushes wait for `release()`. */
  gated = false;
  #release: (() => void)[] = [];
  /**
   * When set, verifications wait for `releaseVerification()`; they read the table as it was when
   * they began (a push meanwhile tore what they read), or, with `readsAtEnd`, as it is then.
   */
  verificationGated = false;
  readsAtEnd = false;
  /** When set, verifications read a table half changed: a digest of no table pushed. */
  readsTorn = false;
  #releaseVerification: (() => void)[] = [];

  async push(table: RouteView, options?: PushOptions): Promise<Result<void, PushFailure>> {
    this.pushes.push(table.revision);
    this.wholes.push(options?.whole ?? false);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.gated) await new Promise<void>((r) => this.#release.push(r));
      if (this.down) return err({ reason: "unreachable", message: "connect ECONNREFUSED" });
      this.table = table;
      return ok(undefined);
    } finally {
      this.inFlight--;
    }
  }

  async held(): Promise<Result<number | null, PushFailure>> {
    this.checks++;
    if (this.down) return err({ reason: "unreachable", message: "connect ECONNREFUSED" });
    return ok(this.table?.revision ?? null);
  }

  async heldDigest(options?: VerifyOptions): Promise<Result<string | null, PushFailure>> {
    this.verifications++;
    this.deeps.push(options?.deep ?? false);
    const atStart = this.table;
    if (this.verificationGated) await new Promise<void>((r) => this.#releaseVerification.push(r));
    if (this.down) return err({ reason: "unreachable", message: "connect ECONNREFUSED" });
    if (this.slowToVerify) return err({ reason: "timeout", message: "no answer in 2000 ms" });
    const table = this.readsAtEnd ? this.table : atStart;
    if (this.readsTorn) return ok("torn");
    return ok(table === null ? null : digestOf(table));
  }

  digestOf(view: RouteView): string {
    return digestOf(view);
  }

  release(): void {
    for (const r of this.#release.splice(0)) r();
  }

  releaseVerification(): void {
    for (const r of this.#releaseVerification.splice(0)) r();
  }
}

/** Every observer call, as `kind:detail` strings. */
function recorder(): { events: string[]; observer: PushObserver } {
  const events: string[] = [];
  return {
    events,
    observer: {
      pushed: (e) => events.push(`pushed:${e.revision}`),
      failed: (e) => events.push(`failed:${e.operation}:${e.reason}`),
      lost: (e) => events.push(`lost:${e.expected}->${e.held}`),
      drifted: (e) => events.push(`drifted:${e.revision}`),
      held: (e) => events.push(`held:${e.revision}`),
    },
  };
}

const snapshot = (revision: number, host = `r${revision}.example.com`): Snapshot =>
  snapshotOf([{ name: "shop", hostnames: [host] }], {}, revision);

function setup(deepVerifyIntervalMs?: number) {
  const clock = new FakeClock();
  const proxy = new FakeProxy();
  const { events, observer } = recorder();
  const pusher = startPusher({
    target: proxy,
    clock,
    observer,
    checkIntervalMs: INTERVAL,
    verifyIntervalMs: VERIFY,
    ...(deepVerifyIntervalMs === undefined ? {} : { deepVerifyIntervalMs }),
  });
  return { clock, proxy, events, pusher };
}

describe("the pusher", () => {
  it("pushes nothing before the first Snapshot, then pushes it and reports what the proxy holds", async () => {
    const { clock, proxy, events, pusher } = setup();
    await clock.advance(INTERVAL);
    expect({ pushes: proxy.pushes, held: pusher.held(), events }).toEqual({
      pushes: [],
      held: null,
      events: [],
    });
    pusher.publish(snapshot(1));
    await settle();
    expect({
      pushes: proxy.pushes,
      held: pusher.held(),
      table: proxy.table?.revision,
      events,
    }).toEqual({
      pushes: [1],
      held: 1,
      table: 1,
      events: ["held:1", "pushed:1"],
    });
    await pusher.close();
  });

  it("leaves one follow-up for Snapshots published during a push, taking the newest; pushes never overlap", async () => {
    const { proxy, events, pusher } = setup();
    proxy.gated = true;
    pusher.publish(snapshot(1));
    await settle();
    pusher.publish(snapshot(2));
    pusher.publish(snapshot(3));
    pusher.publish(snapshot(4));
    proxy.release();
    await settle();
    proxy.release();
    await settle();
    expect({
      pushes: proxy.pushes,
      maxInFlight: proxy.maxInFlight,
      held: pusher.held(),
      events,
    }).toEqual({
      pushes: [1, 4],
      maxInFlight: 1,
      held: 4,
      events: ["held:1", "pushed:1", "held:4", "pushed:4"],
    });
    await pusher.close();
  });

  it("notices at the next check that the proxy lost its table, and pushes it again", async () => {
    const { clock, proxy, events, pusher } = setup();
    pusher.publish(snapshot(5));
    await settle();
    proxy.table = null; // the proxy restarted with its empty map
    await clock.advance(INTERVAL);
    expect({ pushes: proxy.pushes, held: pusher.held(), events }).toEqual({
      pushes: [5, 5],
      held: 5,
      events: ["held:5", "pushed:5", "held:null", "lost:5->null", "held:5", "pushed:5"],
    });
    await pusher.close();
  });

  it("checks on every tick without pushing while the proxy holds the table", async () => {
    const { clock, proxy, pusher } = setup();
    pusher.publish(snapshot(1));
    await settle();
    const checksAfterPush = proxy.checks;
    await clock.advance(INTERVAL * 4);
    expect({ pushes: proxy.pushes, checks: proxy.checks - checksAfterPush }).toEqual({
      pushes: [1],
      checks: 4,
    });
    await pusher.close();
  });

  it("retries a failed push at the next tick, not at once, until the proxy is back", async () => {
    const { clock, proxy, events, pusher } = setup();
    proxy.down = true;
    pusher.publish(snapshot(2));
    await settle();
    expect(proxy.pushes).toEqual([2]);
    await clock.advance(INTERVAL);
    expect(proxy.pushes).toEqual([2, 2]);
    proxy.down = false;
    await clock.advance(INTERVAL);
    expect({ pushes: proxy.pushes, held: pusher.held(), events }).toEqual({
      pushes: [2, 2, 2],
      held: 2,
      events: ["failed:push:unreachable", "failed:push:unreachable", "held:2", "pushed:2"],
    });
    await pusher.close();
  });

  it("counts a push the proxy does not confirm as failed, and tries again at the next tick", async () => {
    const { clock, proxy, events, pusher } = setup();
    const held = proxy.held.bind(proxy);
    let lie = true;
    proxy.held = async () => (lie ? ok(null) : held());
    pusher.publish(snapshot(3));
    await settle();
    lie = false;
    await clock.advance(INTERVAL);
    expect({ pushes: proxy.pushes, events }).toEqual({
      pushes: [3, 3],
      events: ["failed:push:rejected", "held:3", "pushed:3"],
    });
    await pusher.close();
  });

  it("reports a failed check and keeps the table until a check shows the proxy lost it", async () => {
    const { clock, proxy, events, pusher } = setup();
    pusher.publish(snapshot(1));
    await settle();
    proxy.down = true;
    await clock.advance(INTERVAL);
    expect(proxy.pushes).toEqual([1]);
    proxy.down = false;
    proxy.table = null;
    await clock.advance(INTERVAL);
    expect({ pushes: proxy.pushes, events }).toEqual({
      pushes: [1, 1],
      events: [
        "held:1",
        "pushed:1",
        "failed:check:unreachable",
        "held:null",
        "lost:1->null",
        "held:1",
        "pushed:1",
      ],
    });
    await pusher.close();
  });

  it("notices within a verification interval a table changed under the same revision, and pushes it whole again", async () => {
    const { clock, proxy, events, pusher } = setup();
    const pushed = snapshot(1);
    pusher.publish(pushed);
    await settle();
    // Another writer: the same revision, another host (victim.example.com sent elsewhere).
    proxy.table = snapshot(1, "victim.example.com");
    await clock.advance(VERIFY - 1);
    const before = { pushes: [...proxy.pushes], events: [...events] };
    await clock.advance(1);
    expect({
      before,
      pushes: proxy.pushes,
      wholes: proxy.wholes,
      table: proxy.table === pushed,
      held: pusher.held(),
      events,
    }).toEqual({
      before: { pushes: [1], events: ["held:1", "pushed:1"] },
      pushes: [1, 1],
      wholes: [false, true],
      table: true,
      held: 1,
      events: ["held:1", "pushed:1", "drifted:1", "pushed:1"],
    });
    await pusher.close();
  });

  it("verifies a table at once when it first lands, then every verification interval, not at every version check", async () => {
    const { clock, proxy, pusher } = setup();
    await clock.advance(VERIFY);
    const beforeFirstPush = proxy.verifications;
    pusher.publish(snapshot(1));
    await settle();
    const atFirstPush = proxy.verifications;
    await clock.advance(VERIFY * 3);
    expect({
      beforeFirstPush,
      atFirstPush,
      verifications: proxy.verifications,
      checks: proxy.checks,
      pushes: proxy.pushes,
      // 4 ticks before the push, the push's own, 12 after.
    }).toEqual({
      beforeFirstPush: 0,
      atFirstPush: 1,
      verifications: 4,
      checks: 4 + 1 + 12,
      pushes: [1],
    });
    await pusher.close();
  });

  it("says when the first verification ended: after the first push, at the first interval when none landed, or on close", async () => {
    const settledAt = (p: Promise<void>, clock: FakeClock) => {
      let at: number | null = null;
      void p.then(() => {
        at = clock.now();
      });
      return () => at;
    };
    const landed = setup();
    const landedAt = settledAt(landed.pusher.firstVerified, landed.clock);
    await landed.clock.advance(INTERVAL);
    landed.pusher.publish(snapshot(1));
    await settle();
    const none = setup();
    const noneAt = settledAt(none.pusher.firstVerified, none.clock);
    none.proxy.down = true;
    none.pusher.publish(snapshot(1));
    await none.clock.advance(VERIFY);
    const closed = setup();
    const closedAt = settledAt(closed.pusher.firstVerified, closed.clock);
    await closed.pusher.close();
    await settle();
    expect({ landed: landedAt(), none: noneAt(), closed: closedAt() }).toEqual({
      landed: INTERVAL,
      none: VERIFY,
      closed: 0,
    });
    await landed.pusher.close();
    await none.pusher.close();
  });

  it("asks for a deep verification every deep interval, after a failed push, and again after one that did not count", async () => {
    const { clock, proxy, events, pusher } = setup(3 * VERIFY);
    pusher.publish(snapshot(1));
    await settle();
    await clock.advance(VERIFY * 6);
    const timed = [...proxy.deeps];
    proxy.down = true;
    pusher.publish(snapshot(2));
    await settle();
    proxy.down = false;
    await clock.advance(VERIFY * 2);
    const afterFailure = proxy.deeps.slice(timed.length);
    await clock.advance(VERIFY);
    proxy.slowToVerify = true;
    await clock.advance(VERIFY);
    proxy.slowToVerify = false;
    await clock.advance(VERIFY * 2);
    expect({
      timed,
      afterFailure,
      afterTimeout: proxy.deeps.slice(timed.length + afterFailure.length),
      events: events.filter((e) => e.startsWith("failed") || e.startsWith("drifted")),
    }).toEqual({
      // The first table's at once, not deep; deep at 3 s and 6 s; then at 7 s after the failed
      // push, not at 8 s.
      timed: [false, false, false, true, false, false, true],
      afterFailure: [true, false],
      // At 9 s not deep; at 10 s deep, timed out; at 11 s deep again, at 12 s not.
      afterTimeout: [false, true, true, false],
      events: ["failed:push:unreachable", "failed:verify:timeout"],
    });
    await pusher.close();
  });

  it("reports a failed verification and keeps the table; a verification that finds none counts it lost", async () => {
    const { clock, proxy, events, pusher } = setup();
    pusher.publish(snapshot(1));
    await settle();
    proxy.slowToVerify = true;
    await clock.advance(VERIFY);
    proxy.slowToVerify = false;
    const held = proxy.held.bind(proxy);
    // A proxy that lost its table but still says it holds the revision.
    proxy.held = async () => ok(1);
    proxy.table = null;
    await clock.advance(VERIFY);
    proxy.held = held;
    expect({ pushes: proxy.pushes, wholes: proxy.wholes, events }).toEqual({
      pushes: [1, 1],
      wholes: [false, true],
      events: [
        "held:1",
        "pushed:1",
        "failed:verify:timeout",
        "held:null",
        "lost:1->null",
        "held:1",
        "pushed:1",
      ],
    });
    await pusher.close();
  });

  it("pushes a Snapshot published during a verification at once, and drops that verification", async () => {
    const { clock, proxy, events, pusher } = setup();
    pusher.publish(snapshot(1));
    await settle();
    proxy.verificationGated = true;
    await clock.advance(VERIFY);
    pusher.publish(snapshot(2));
    await settle();
    const during = { verifications: proxy.verifications, pushes: [...proxy.pushes] };
    // It reads revision 1's table, and revision 2 was pushed meanwhile: dropped, not drift.
    proxy.releaseVerification();
    await settle();
    expect({ during, pushes: proxy.pushes, wholes: proxy.wholes, events }).toEqual({
      // The first table's verification, then the one held.
      during: { verifications: 2, pushes: [1, 2] },
      pushes: [1, 2],
      wholes: [false, false],
      events: ["held:1", "pushed:1", "held:2", "pushed:2"],
    });
    await pusher.close();
  });

  it(`after ${MAX_DROPPED_VERIFICATIONS} verifications dropped in a row, holds pushes back for the next, which notices drift`, async () => {
    const { clock, proxy, events, pusher } = setup();
    pusher.publish(snapshot(1));
    await settle();
    proxy.verificationGated = true;
    proxy.readsTorn = true;
    let revision = 1;
    for (let i = 0; i < MAX_DROPPED_VERIFICATIONS; i++) {
      await clock.advance(VERIFY);
      pusher.publish(snapshot(++revision));
      await settle();
      proxy.releaseVerification();
      await settle();
    }
    // Another writer changes the table under the last revision pushed.
    proxy.readsTorn = false;
    proxy.table = snapshot(revision, "victim.example.com");
    await clock.advance(VERIFY);
    pusher.publish(snapshot(revision + 1));
    await settle();
    const held = [...proxy.pushes];
    proxy.releaseVerification();
    await settle();
    expect({ held, pushes: proxy.pushes, wholes: proxy.wholes, drifted: events.at(-3) }).toEqual({
      held: [1, 2, 3, 4],
      pushes: [1, 2, 3, 4, 5],
      wholes: [false, false, false, false, true],
      drifted: "drifted:4",
    });
    await pusher.close();
  });

  it("counts a verification that a push overlapped when what it read is the newest table pushed", async () => {
    const { clock, proxy, events, pusher } = setup();
    pusher.publish(snapshot(1));
    await settle();
    proxy.verificationGated = true;
    proxy.readsAtEnd = true;
    let revision = 1;
    // More verifications overlapped than would hold pushes back, were they dropped.
    for (let i = 0; i <= MAX_DROPPED_VERIFICATIONS; i++) {
      await clock.advance(VERIFY);
      pusher.publish(snapshot(++revision));
      await settle();
      const during = proxy.pushes.length;
      proxy.releaseVerification();
      await settle();
      expect(during).toBe(revision);
    }
    expect({
      pushes: proxy.pushes,
      wholes: proxy.wholes.some(Boolean),
      drifted: events.filter((e) => e.startsWith("drifted")),
    }).toEqual({ pushes: [1, 2, 3, 4, 5], wholes: false, drifted: [] });
    await pusher.close();
  });

  it("counts a verification that read the table confirmed when it began, though pushes came through meanwhile, and never holds a push back", async () => {
    const { clock, proxy, events, pusher } = setup();
    pusher.publish(snapshot(1));
    await settle();
    proxy.verificationGated = true;
    let revision = 1;
    const during: number[] = [];
    for (let i = 0; i <= MAX_DROPPED_VERIFICATIONS; i++) {
      await clock.advance(VERIFY);
      pusher.publish(snapshot(++revision));
      await settle();
      pusher.publish(snapshot(++revision));
      await settle();
      during.push(proxy.pushes.length);
      proxy.releaseVerification();
      await settle();
    }
    expect({
      during,
      wholes: proxy.wholes.some(Boolean),
      drifted: events.filter((e) => e.startsWith("drifted")),
    }).toEqual({ during: [3, 5, 7, 9], wholes: false, drifted: [] });
    await pusher.close();
  });

  it("waits for a running push on close, then pushes nothing and leaves no timer", async () => {
    const { clock, proxy, pusher } = setup();
    proxy.gated = true;
    pusher.publish(snapshot(1));
    await settle();
    const closing = pusher.close();
    pusher.publish(snapshot(2));
    proxy.release();
    await closing;
    await clock.advance(INTERVAL * 2);
    expect({ pushes: proxy.pushes, timers: clock.pending() }).toEqual({ pushes: [1], timers: [] });
  });
});
