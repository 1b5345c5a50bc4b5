import { describe, expect, it } from "vitest";
import { Coalescer } from "../../src/coalescer.ts";
import { build } from "../../src/snapshot/build.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { meta, secretsOf } from "../support/world.ts";

/** A schedule the test drives: scheduled rebuilds start only when `flush` is called. */
function manualSchedule() {
  const queue: (() => void)[] = [];
  return {
    schedule: (fn: () => void) => queue.push(fn),
    flush: () => {
      for (const fn of queue.splice(0)) fn();
    },
    pending: () => queue.length,
  };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("Coalescer", () => {
  it("turns a 10-signal burst into one rebuild", async () => {
    const m = manualSchedule();
    let runs = 0;
    const c = new Coalescer({ run: () => void runs++, onError: () => {}, schedule: m.schedule });
    for (let i = 0; i < 10; i++) c.signal();
    m.flush();
    await c.idle();
    expect({ runs, stats: c.stats() }).toEqual({
      runs: 1,
      stats: { signals: 10, runs: 1, coalesced: 9 },
    });
  });

  it("leaves exactly one follow-up for any number of signals during a rebuild, and never overlaps", async () => {
    const m = manualSchedule();
    const gates = [deferred(), deferred()];
    let running = 0;
    let maxRunning = 0;
    const seen: number[] = [];
    let state = 0;
    const c = new Coalescer({
      run: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        const observed = state;
        await gates[seen.length]?.promise;
        seen.push(observed);
        running--;
      },
      onError: () => {},
      schedule: m.schedule,
    });
    c.signal();
    m.flush();
    // The first rebuild is in flight: these arrive during it.
    for (let i = 0; i < 10; i++) {
      state = i + 1;
      c.signal();
    }
    expect(m.pending()).toBe(0);
    gates[0]!.resolve();
    gates[1]!.resolve();
    await c.idle();
    // The follow-up saw the state after the last signal: nothing was lost.
    expect({ seen, maxRunning, stats: c.stats() }).toEqual({
      seen: [0, 10],
      maxRunning: 1,
      stats: { signals: 11, runs: 2, coalesced: 9 },
    });
  });

  it("tells, as each rebuild starts, how many signals it absorbed beyond its own", async () => {
    const m = manualSchedule();
    const gate = deferred();
    const reported: number[] = [];
    let runs = 0;
    const c = new Coalescer({
      run: async () => {
        if (runs++ === 0) await gate.promise;
      },
      onError: () => {},
      onCoalesced: (count) => reported.push(count),
      schedule: m.schedule,
    });
    for (let i = 0; i < 10; i++) c.signal();
    m.flush();
    // The first rebuild is in flight: three signals leave one follow-up that absorbs two.
    for (let i = 0; i < 3; i++) c.signal();
    gate.resolve();
    await c.idle();
    c.signal();
    m.flush();
    await c.idle();
    expect({ reported, stats: c.stats() }).toEqual({
      reported: [9, 2],
      stats: { signals: 14, runs: 3, coalesced: 11 },
    });
  });

  it("reports a rebuild that throws and keeps going", async () => {
    const m = manualSchedule();
    const errors: unknown[] = [];
    let runs = 0;
    const c = new Coalescer({
      run: () => {
        runs++;
        if (runs === 1) throw new Error("boom");
      },
      onError: (e) => errors.push(e),
      schedule: m.schedule,
    });
    c.signal();
    m.flush();
    await c.idle();
    c.signal();
    m.flush();
    await c.idle();
    expect({ runs, errors: errors.map((e) => (e as Error).message) }).toEqual({
      runs: 2,
      errors: ["boom"],
    });
  });

  it("stop waits for the rebuild in flight and refuses later signals", async () => {
    const m = manualSchedule();
    const gate = deferred();
    let finished = 0;
    const c = new Coalescer({
      run: async () => {
        await gate.promise;
        finished++;
      },
      onError: () => {},
      schedule: m.schedule,
    });
    c.signal();
    m.flush();
    c.signal();
    const stopped = c.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    gate.resolve();
    await stopped;
    c.signal();
    expect({ finished, pending: m.pending() }).toEqual({ finished: 1, pending: 0 });
  });
});

describe("SnapshotHolder", () => {
  it("serves nothing before the first swap, then the newest Snapshot only", () => {
    const h = new SnapshotHolder();
    expect(h.current()).toBeNull();
    const s1 = build(null, secretsOf(), meta(1));
    const s2 = build(null, secretsOf(), meta(2));
    expect([h.swap(s1), h.swap(s2), h.swap(s1), h.swap(build(null, secretsOf(), meta(2)))]).toEqual(
      [true, true, false, false],
    );
    expect(h.current()).toBe(s2);
  });
});
