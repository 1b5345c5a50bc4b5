// The collection after the first Snapshot (ADR 59): scheduled once, cancellable, logged; and
// V8's collection itself, which frees garbage without leaving a global `gc` behind.

import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { err, ok } from "../../src/result.ts";
import {
  collectOnce,
  logReleased,
  v8FullCollection,
} from "../../src/runtime/start-up-collection.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { memoryLogger } from "../support/log-sink.ts";

function harness(result = ok(undefined) as ReturnType<typeof v8FullCollection>) {
  const clock = new FakeClock();
  const memory = memoryLogger("info");
  let calls = 0;
  const collection = collectOnce({
    clock,
    delayMs: 250,
    collect: () => {
      calls += 1;
      return result;
    },
    report: (released) => logReleased(memory.logger, "main", released),
  });
  const logged = () =>
    memory.lines().map((l) => {
      const { time: _, pid: __, hostname: ___, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return rest;
    });
  return { clock, collection, calls: () => calls, logged };
}

const aMiB = expect.any(Number) as number;

describe("collectOnce", () => {
  it("collects once, the delay after it is first due, and logs what it gave back", async () => {
    const h = harness();
    expect(h.clock.pending()).toEqual([]);
    h.collection.due();
    await h.clock.advance(100);
    h.collection.due();
    expect(h.clock.pending()).toEqual([150]);
    await h.clock.advance(149);
    expect(h.calls()).toBe(0);
    await h.clock.advance(1);
    h.collection.due();
    await h.clock.advance(10_000);
    expect({ calls: h.calls(), pending: h.clock.pending(), logged: h.logged() }).toEqual({
      calls: 1,
      pending: [],
      logged: [
        {
          level: 30,
          ms: 0,
          rssMiB: [aMiB, aMiB],
          heapTotalMiB: [aMiB, aMiB],
          heapUsedMiB: [aMiB, aMiB],
          msg: "start-up memory released",
        },
      ],
    });
  });

  it("never collects once cancelled", async () => {
    const h = harness();
    h.collection.due();
    h.collection.cancel();
    await h.clock.advance(10_000);
    expect({ calls: h.calls(), pending: h.clock.pending(), logged: h.logged() }).toEqual({
      calls: 0,
      pending: [],
      logged: [],
    });
  });

  it("logs a warning when the runtime has no collection to give", async () => {
    const h = harness(err("V8's gc is not available in a new context"));
    h.collection.due();
    await h.clock.advance(250);
    expect(h.logged()).toEqual([
      {
        level: 40,
        reason: "V8's gc is not available in a new context",
        msg: "start-up memory not released",
      },
    ]);
  });
});

describe("v8FullCollection", () => {
  it("frees garbage and leaves no gc function to other contexts, nor a new global", () => {
    const globalGc = typeof (globalThis as { gc?: unknown }).gc;
    let garbage: { i: number; s: string }[] | null = [];
    for (let i = 0; i < 400_000; i += 1) garbage.push({ i, s: `value-${i}` });
    const before = process.memoryUsage().heapUsed;
    garbage = null;
    const result = v8FullCollection();
    const freedMiB = (before - process.memoryUsage().heapUsed) / 2 ** 20;
    expect({
      result,
      freedEnough: freedMiB > 10,
      inNewContext: runInNewContext("typeof gc"),
      global: typeof (globalThis as { gc?: unknown }).gc,
    }).toEqual({
      result: ok(undefined),
      freedEnough: true,
      inNewContext: "undefined",
      global: globalGc,
    });
  });
});
