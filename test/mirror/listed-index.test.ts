import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ListCapture, ListedIndex, listChanges } from "../../src/mirror/listed-index.ts";

type Item = { readonly namespace: string; readonly name: string; readonly version: number };

/** One step on the index: set a key to a new object, delete it, or capture the list. */
type Op =
  | { readonly kind: "set" | "delete"; readonly namespace: string; readonly name: string }
  | { readonly kind: "list" };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("set" as const, "delete" as const),
    namespace: fc.constantFrom("a", "b"),
    name: fc.constantFrom("x", "y", "z", "w"),
  }),
  fc.constant({ kind: "list" as const }),
);

/**
 * Every capture of the list, in order (the same one again while nothing changed), each checked
 * against the order a list keeps (a value replaced in its place, a new one last) when it was
 * taken and again at the end: a capture never changes. Chunks of 2 values, so that chunks fill,
 * empty and are copied.
 */
function captures(ops: readonly Op[]): ListCapture<Item>[] {
  const index = new ListedIndex<Item>(2);
  const model: Item[] = [];
  const taken: [ListCapture<Item>, Item[]][] = [];
  const take = () => {
    const capture = index.list();
    expect([...capture]).toEqual(model);
    taken.push([capture, [...model]]);
  };
  take();
  let version = 0;
  for (const o of ops) {
    if (o.kind === "list") {
      take();
      continue;
    }
    const at = model.findIndex((i) => i.namespace === o.namespace && i.name === o.name);
    if (o.kind === "delete") {
      index.delete(o.namespace, o.name);
      if (at >= 0) model.splice(at, 1);
    } else {
      const item = { namespace: o.namespace, name: o.name, version: ++version };
      index.set(o.namespace, o.name, item);
      if (at >= 0) model[at] = item;
      else model.push(item);
    }
  }
  take();
  for (const [capture, then] of taken)
    expect({ length: capture.length, items: [...capture] }).toEqual({
      length: then.length,
      items: then,
    });
  return taken.map(([capture]) => capture);
}

/** What a comparison of two whole captures finds, keys sorted. */
function reference(captured: ListCapture<Item>, capturedAfter: ListCapture<Item>) {
  const [from, to] = [[...captured], [...capturedAfter]];
  const key = (i: { namespace: string; name: string }) => `${i.namespace}/${i.name}`;
  const before = new Map(from.map((i) => [key(i), i]));
  const after = new Set(to.map(key));
  return {
    set: sorted(to.filter((i) => before.get(key(i)) !== i)),
    removed: sorted(
      from.filter((i) => !after.has(key(i))).map(({ namespace, name }) => ({ namespace, name })),
    ),
  };
}

const sorted = <T extends { namespace: string; name: string }>(items: readonly T[]): T[] =>
  [...items].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));

const distinct = (captures: readonly ListCapture<Item>[]) => new Set(captures).size;

describe("what changed between two captures of a listed index", () => {
  it("is what a comparison of the whole captures finds, for any captures up to 32 apart", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), fc.nat(), fc.nat(), (ops, i, j) => {
        const all = captures(ops);
        const [a, b] = [i % all.length, j % all.length].sort((x, y) => x - y) as [number, number];
        const [from, to] = [all[a]!, all[b]!];
        const linked = listChanges(from, to);
        // Captures of one array count once: the records are per array handed out.
        const apart = distinct(all.slice(a, b + 1)) - 1;
        if (apart > 32) expect(linked).toBeNull();
        else {
          expect(linked).not.toBeNull();
          expect({ set: sorted(linked!.set), removed: sorted(linked!.removed) }).toEqual(
            reference(from, to),
          );
        }
      }),
    );
  });

  it("links nothing backwards, across indexes or past the kept records", () => {
    const index = new ListedIndex<Item>();
    const other = new ListedIndex<Item>();
    const first = index.list();
    const lists = [first];
    for (let n = 1; n <= 33; n++) {
      index.set("a", "x", { namespace: "a", name: "x", version: n });
      lists.push(index.list());
    }
    expect({
      backwards: listChanges(lists[5]!, lists[2]!),
      otherIndex: listChanges(other.list(), lists[1]!),
      unrecorded: listChanges([], lists[1]!),
      tooFar: listChanges(first, lists[33]!),
      farthest: listChanges(lists[1]!, lists[33]!),
    }).toEqual({
      backwards: null,
      otherIndex: null,
      unrecorded: null,
      tooFar: null,
      farthest: { set: [{ namespace: "a", name: "x", version: 33 }], removed: [] },
    });
  });
});
