import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createListSplitter } from "../../src/kube/codec/list-splitter.ts";

/** Feeds body to a splitter in the given chunks; the items, metadata or the first failure. */
function split(body: Buffer, cuts: readonly number[]) {
  const splitter = createListSplitter(1024);
  const items: unknown[] = [];
  let from = 0;
  for (const to of [...cuts, body.length]) {
    const r = splitter.push(body.subarray(from, to));
    if ("message" in r) return r;
    items.push(...r.items.map((t) => JSON.parse(t) as unknown));
    from = to;
  }
  const end = splitter.end();
  if ("message" in end) return end;
  return { items, metadata: end.metadata === null ? null : (JSON.parse(end.metadata) as unknown) };
}

const value = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.integer(),
  fc.constant(null),
  fc.constantFrom('"quoted"', "back\\slash", "{[braces]}", "ünïcødé ✓"),
);
const item = fc.record({
  metadata: fc.record({ name: fc.string(), resourceVersion: fc.nat().map(String) }),
  data: fc.dictionary(fc.string(), value, { maxKeys: 4 }),
});
const list = fc.record({
  kind: fc.constant("SecretList"),
  metadata: fc.record({ resourceVersion: fc.nat().map(String), continue: fc.string() }),
  items: fc.array(item, { maxLength: 6 }),
});

describe("createListSplitter", () => {
  it("gives every item and the metadata whole, wherever the chunks are cut", () => {
    fc.assert(
      fc.property(
        list,
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        (l, metadataLast, rawCuts) => {
          const json = metadataLast
            ? JSON.stringify({ kind: l.kind, items: l.items, metadata: l.metadata }, null, 1)
            : JSON.stringify(l);
          const body = Buffer.from(json);
          const cuts = [...new Set(rawCuts.map((c) => c % (body.length + 1)))].sort(
            (a, b) => a - b,
          );
          expect(split(body, cuts)).toEqual({ items: l.items, metadata: l.metadata });
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reports null items as none, and a body that ends early or holds two objects", () => {
    const whole = (text: string) => split(Buffer.from(text), []);
    expect([
      whole('{"metadata":{"resourceVersion":"1"},"items":null}'),
      whole('{"items":[{"a":1}'),
      whole('{"items":[]}{"items":[]}'),
      whole('{"kind":"SecretList"}'),
    ]).toEqual([
      { items: [], metadata: { resourceVersion: "1" } },
      { message: "list body ended before its JSON object did" },
      { message: "list body is not one JSON object" },
      { items: [], metadata: null },
    ]);
  });

  it("refuses an item longer than the limit without keeping it", () => {
    const big = JSON.stringify({ items: [{ data: "x".repeat(2_000) }] });
    expect(split(Buffer.from(big), [10, 500, 1_500])).toEqual({
      message: "list item of 1490+ bytes exceeds the item limit",
    });
  });
});
