import { describe, expect, it } from "vitest";
import { Heartbeat, heartbeatMonitor } from "../../src/route/heartbeat.ts";
import { FakeClock } from "../support/fake-clock.ts";

describe("heartbeatMonitor", () => {
  it("answers true while the beats move, false once they stood still for staleMs, true when they move again", async () => {
    const clock = new FakeClock();
    const beats = new Heartbeat();
    // Another thread's view of the same memory.
    const seen = new Heartbeat(beats.buffer);
    const answering = heartbeatMonitor(() => seen.count(), clock, 5_000);
    const trace: [number, boolean][] = [];
    const at = async (ms: number, beat: boolean) => {
      await clock.advance(ms - clock.now());
      if (beat) beats.beat();
      trace.push([ms, answering()]);
    };
    await at(1_000, true);
    await at(5_999, false);
    await at(6_000, false);
    await at(6_500, true);
    await at(30_000, true);
    await at(35_000, false);
    expect(trace).toEqual([
      [1_000, true],
      [5_999, true],
      [6_000, false],
      [6_500, true],
      [30_000, true],
      [35_000, false],
    ]);
  });

  it("counts a thread that never beat as stopped once staleMs passed since it was started", async () => {
    const clock = new FakeClock();
    const answering = heartbeatMonitor(() => 7, clock, 5_000);
    const before = answering();
    await clock.advance(5_000);
    expect([before, answering()]).toEqual([true, false]);
  });
});
