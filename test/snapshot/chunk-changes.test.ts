import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkLists } from "../../src/push/chunk-lists.ts";
import { CHUNK_SIZE, chunked, replaceSlots } from "../../src/snapshot/app-table.ts";
import { changedChunks, forChangedChunks } from "../../src/snapshot/chunk-changes.ts";

type Item = { readonly id: number; readonly version: number };
const SLOTS = CHUNK_SIZE * 10 + 5;
const start = () => chunked(Array.from({ length: SLOTS }, (_, id): Item => ({ id, version: 0 })));
/** The chunk indexes whose chunk objects differ, by comparing every one. */
const differing = (a: readonly object[], b: readonly object[]) =>
  b.flatMap((chunk, c) => (chunk === a[c] ? [] : [c]));

/** The first directory and one made from the one before for each step, in order. */
function chain(changes: readonly (readonly number[])[]): (readonly (readonly Item[])[])[] {
  const directories = [start()];
  for (const [n, slots] of changes.entries()) {
    const replacements = new Map(slots.map((s): [number, Item] => [s, { id: s, version: n + 1 }]));
    directories.push(replaceSlots(directories.at(-1)!, replacements));
  }
  return directories;
}

// Each step replaces the items at some slots with new versions.
const steps = fc.array(fc.uniqueArray(fc.integer({ min: 0, max: SLOTS - 1 }), { maxLength: 6 }), {
  minLength: 1,
  maxLength: 40,
});

describe("the chunks a directory replaced", () => {
  it("are known from any earlier directory of the chain, and visited as a comparison of every chunk would", () => {
    fc.assert(
      fc.property(steps, fc.nat(), (changes, pick) => {
        const directories = chain(changes);
        const from = directories[pick % directories.length]!;
        const to = directories.at(-1)!;
        const visited: number[] = [];
        forChangedChunks(from, to, (c) => visited.push(c));
        const known = changedChunks(from, to);
        expect({
          visited,
          coversEveryChange: differing(from, to).every((c) => known?.includes(c)),
        }).toEqual({ visited: differing(from, to), coversEveryChange: true });
      }),
    );
  });

  it("are unknown between directories of no chain, or further apart than the walk goes", () => {
    let far = start();
    const first = far;
    for (let n = 0; n < 40; n++) far = replaceSlots(far, new Map([[n, { id: n, version: 1 }]]));
    const visited: number[] = [];
    forChangedChunks(first, far, (c) => visited.push(c));
    expect({
      unrelated: changedChunks(start(), far),
      tooFar: changedChunks(first, far),
      same: changedChunks(far, far),
      visited,
    }).toEqual({ unrelated: null, tooFar: null, same: [], visited: [0] });
  });
});

describe("a value per chunk, listed per directory", () => {
  it("equals the values made afresh for every directory, in any order asked, each chunk's made once", () => {
    fc.assert(
      fc.property(steps, fc.array(fc.nat()), (changes, asks) => {
        const directories = chain(changes);
        const made = new Map<object, number>();
        const sum = (chunk: readonly Item[]) => chunk.reduce((s, i) => s + i.version, 0);
        const lists = chunkLists((chunk: readonly Item[], c: number) => {
          made.set(chunk, (made.get(chunk) ?? 0) + 1);
          return `${c}:${sum(chunk)}`;
        });
        const order = [...directories.keys(), ...asks.map((a) => a % directories.length)];
        const got = order.map((d) => lists(directories[d]!));
        expect({
          got,
          madeTwice: [...made.values()].filter((n) => n > 1).length,
        }).toEqual({
          got: order.map((d) => directories[d]!.map((chunk, c) => `${c}:${sum(chunk)}`)),
          madeTwice: 0,
        });
      }),
    );
  });
});
