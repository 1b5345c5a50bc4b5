// A state's place among its pod's writes, against the high-water mark: pure, whole values.

import { describe, expect, it } from "vitest";
import { continueFrom, standing } from "../../src/state/generation.ts";
import type { Mark } from "../../src/state/mark.ts";

const S = "0123456789abcdef";
const OTHER = "fedcba9876543210";
const mark: Mark = { series: S, writes: 5, heardAt: 900, savedAt: 1_000, registry: "41" };
const gen = (series: string, writes: number) => ({ series, writes, heardAt: 800 });
const never = (): string => {
  throw new Error("no new series expected");
};

describe("standing", () => {
  it("tells an older write of the mark's series, another series, the newest, and no mark", () => {
    expect([
      standing(gen(S, 4), mark),
      standing(gen(OTHER, 9), mark),
      standing(gen(S, 5), mark),
      standing(gen(S, 6), mark),
      standing(gen(S, 1), null),
    ]).toEqual([
      { kind: "older", newest: mark },
      { kind: "other-series", newest: mark },
      { kind: "newest" },
      { kind: "newest" },
      { kind: "unknown" },
    ]);
  });
});

describe("continueFrom", () => {
  it("goes on past the mark and the served state, in the mark's series", () => {
    expect([
      continueFrom(gen(S, 4), mark, never),
      continueFrom(gen(S, 6), mark, never),
      continueFrom(gen(OTHER, 9), mark, never),
      continueFrom(null, mark, never),
    ]).toEqual([
      { series: S, writes: 5, heardAt: 800 },
      { series: S, writes: 6, heardAt: 800 },
      { series: S, writes: 5, heardAt: 800 },
      { series: S, writes: 5, heardAt: null },
    ]);
  });

  it("without a mark, goes on from the served state, or starts a series", () => {
    expect([continueFrom(gen(OTHER, 3), null, never), continueFrom(null, null, () => S)]).toEqual([
      { series: OTHER, writes: 3, heardAt: 800 },
      { series: S, writes: 0, heardAt: null },
    ]);
  });
});
