import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sortedInSlices } from "../../src/state/sorted-in-slices.ts";

type Item = readonly [key: number, at: number];
const byKey = (a: Item, b: Item): number => a[0] - b[0];

describe("sortedInSlices", () => {
  it("sorts as Array.prototype.sort does, stable, whatever the slice", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 300 }),
        fc.integer({ min: 1, max: 40 }),
        async (keys, slice) => {
          const items: Item[] = keys.map((k, at) => [k, at]);
          const before = [...items];
          expect(await sortedInSlices(items, byKey, slice)).toEqual([...items].sort(byKey));
          expect(items).toEqual(before);
        },
      ),
    );
  });

  it("gives the event loop a turn between slices", async () => {
    const items: Item[] = Array.from({ length: 1_000 }, (_, at) => [(at * 7919) % 1_000, at]);
    let turns = 0;
    let sorting = true;
    const tick = (): void => {
      if (!sorting) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    const sorted = await sortedInSlices(items, byKey, 100);
    sorting = false;
    // 10 runs sorted, then 4 rounds of merges of 1,000 elements: a turn after every 100.
    expect({ keys: sorted.map(([k]) => k), turns: turns >= 40 }).toEqual({
      keys: Array.from({ length: 1_000 }, (_, k) => k),
      turns: true,
    });
  });
});
