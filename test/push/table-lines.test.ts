import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { routingTable, type TableEntry } from "../../src/push/table.ts";
import { type KeyKind, type LineFormat, tableLines } from "../../src/push/table-lines.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import {
  rotated,
  rotation,
  snapshotOfWorld,
  zeroHopWorld,
} from "../support/zero-hop-arbitraries.ts";

const UPSTREAMS = ["http://10.0.0.1:8080", "http://shop.svc:80/", "https://tls.example"];

const format: LineFormat = (kind, name, entry) => `${kind} ${name} ${JSON.stringify(entry)}`;

/** Every key of the table in `format`, the table's way: from its maps, in no particular order. */
function expectedLines(snapshot: Snapshot): string[] {
  const table = routingTable(snapshot);
  const lines = (kind: KeyKind, map: ReadonlyMap<string, TableEntry>) =>
    [...map].map(([name, entry]) => format(kind, name, entry));
  return [...lines("exact", table.exact), ...lines("wildcard", table.wildcard)].sort();
}

describe("the table's lines, kept per App chunk", () => {
  it("are the table's keys and entries after every Secret change, never a line left over", () => {
    fc.assert(
      fc.property(
        zeroHopWorld(UPSTREAMS),
        fc.array(rotation, { maxLength: 6 }),
        (first, changes) => {
          let now = { world: first, snapshot: snapshotOfWorld(first, 1) };
          expect(tableLines(now.snapshot, format).flat().sort()).toEqual(
            expectedLines(now.snapshot),
          );
          for (const [i, change] of changes.entries()) {
            now = rotated(now.world, now.snapshot, change, i + 2);
            expect(tableLines(now.snapshot, format).flat().sort()).toEqual(
              expectedLines(now.snapshot),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
