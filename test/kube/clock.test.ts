import { describe, expect, it } from "vitest";
import { sleep, systemClock } from "../../src/clock.ts";

describe("systemClock", () => {
  it("never fires a timer before its time by performance.now()", async () => {
    // Busy turns of the loop make its cached time lag the real one, which is when a plain
    // setTimeout fires early.
    const spin = (ms: number) => {
      const end = performance.now() + ms;
      while (performance.now() < end);
    };
    const early: number[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        await new Promise((r) => setImmediate(r));
        spin(i % 4);
        const ms = 5 + (i % 7);
        const start = performance.now();
        await sleep(systemClock, ms, new AbortController().signal);
        const waited = performance.now() - start;
        if (waited < ms) early.push(waited);
      }),
    );
    expect(early).toEqual([]);
  });

  it("cancels a timer that has not fired", async () => {
    let fired = false;
    const cancel = systemClock.setTimer(5, () => {
      fired = true;
    });
    cancel();
    await new Promise((r) => setTimeout(r, 20));
    expect(fired).toBe(false);
  });
});
