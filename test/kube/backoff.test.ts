import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Backoff, backoffDelay, DEFAULT_BACKOFF } from "../../src/kube/cache/backoff.ts";

describe("backoffDelay", () => {
  it("doubles from 800 ms and stays within [base, 2 * base] and under the 30 s cap", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, r) => {
          const base = Math.min(800 * 2 ** attempt, 15_000);
          const delay = backoffDelay(DEFAULT_BACKOFF, attempt, r);
          expect(delay).toBeGreaterThanOrEqual(base);
          expect(delay).toBeLessThanOrEqual(2 * base); // < in exact arithmetic; r near 1 rounds up
          expect(delay).toBeLessThanOrEqual(30_000);
        },
      ),
    );
  });
});

describe("Backoff", () => {
  it("grows with each failure", () => {
    const b = new Backoff(DEFAULT_BACKOFF, () => 0);
    expect([b.next(0), b.next(0), b.next(0), b.next(0)]).toEqual([800, 1_600, 3_200, 6_400]);
  });

  it("starts over after being healthy for the reset period, not before", () => {
    const b = new Backoff({ ...DEFAULT_BACKOFF, resetAfterMs: 60_000 }, () => 0);
    b.next(0);
    b.next(0);
    b.markHealthy(1_000);
    b.markHealthy(50_000); // only the first mark since the failure counts
    expect(b.next(60_999)).toBe(3_200);
    b.markHealthy(61_000);
    expect(b.next(121_000)).toBe(800);
  });
});
