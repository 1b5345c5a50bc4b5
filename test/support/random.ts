// Seeded randomness for generated tests: the seed → sequence mapping depends on nothing else, so a
// seed printed by a failing run regenerates the same values anywhere. The generator is envtest's.

import { seededRandom } from "@replica-mirror/envtest";

export interface Random {
  /** In [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** An integer in [lo, hi]. */
  between(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

/** A Random seeded with `seed` (any integer). */
export function seeded(seed: number): Random {
  const next = seededRandom(seed);
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    between: (lo, hi) => lo + int(hi - lo + 1),
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError("pick from an empty list");
      return items[int(items.length)]!;
    },
    chance: (p) => next() < p,
  };
}
