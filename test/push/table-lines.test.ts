import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { routingTable, type TableEntry } from "../../src/push/table.ts";
import { type KeyKind, type LineFormat, tableLines } from "../../src/push/table-lines.ts";
import { rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { meta, secretData, secretsOf } from "../support/world.ts";
import { snapshotOfWorld, zeroHopWorld } from "../support/zero-hop-arbitraries.ts";

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
    const change = fc.record({
      app: fc.nat(),
      token: fc.constantFrom("t", "", null),
    });
    fc.assert(
      fc.property(zeroHopWorld(UPSTREAMS), fc.array(change, { maxLength: 6 }), (world, changes) => {
        let snapshot = snapshotOfWorld(world, 1);
        const values = new Map(Object.entries(world.secrets).map(([n, v]) => [n, v.token!]));
        expect(tableLines(snapshot, format).flat().sort()).toEqual(expectedLines(snapshot));
        for (const [i, { app, token }] of changes.entries()) {
          if (world.apps.length === 0) break;
          const name = `${world.apps[app % world.apps.length]!.name}-credentials`;
          if (token === null) values.delete(name);
          else values.set(name, token);
          const secrets = secretsOf(
            [...values].map(([n, v]) => [`apps/${n}`, secretData({ token: v })]),
          );
          const ref = { namespace: "apps", name };
          snapshot = rebuildForSecrets(snapshot, [ref], secrets, meta(i + 2));
          expect(tableLines(snapshot, format).flat().sort()).toEqual(expectedLines(snapshot));
        }
      }),
      { numRuns: 300 },
    );
  });
});
