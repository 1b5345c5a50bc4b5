// SecretStore.present, what the state keeper captures on every Snapshot published: the same
// array while nothing changed, a new one after any change, and never an array it handed out
// changed afterwards (the state writer diffs the one it wrote against the next, ADR 79).

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SecretObject } from "../../src/kube/cache/list-watch.ts";
import { SecretStore } from "../../src/mirror/secret-store.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { ReadKeys } from "../../src/snapshot/types.ts";

const secret = (name: string, rv: number, token = `t${rv}`): SecretObject => ({
  metadata: { namespace: "ns", name, resourceVersion: String(rv) },
  data: { token },
});

const tokens: ReadKeys = { bytes: new Set(["token"]), presence: new Set() };

function storeWatching(names: readonly string[]): SecretStore {
  const store = new SecretStore();
  const watched = new SecretIndex<ReadKeys>();
  for (const n of names) watched.set("ns", n, tokens);
  store.setWatched(watched);
  return store;
}

const shown = (list: Iterable<{ name: string; resourceVersion: string }>) =>
  [...list].map((s) => `${s.name}@${s.resourceVersion}`);

describe("SecretStore.present", () => {
  it("keeps its array while nothing changes; a change replaces in place, adds last, and copies", () => {
    const store = storeWatching(["a", "b", "c", "d"]);
    for (const [i, n] of ["a", "b", "c"].entries())
      store.apply("upsert", secret(n, i + 1), "watch");
    const first = store.present();
    const again = store.present();
    store.apply("upsert", secret("b", 10), "watch");
    store.apply("upsert", secret("d", 11), "watch");
    const second = store.present();
    store.apply("delete", secret("a", 12), "watch");
    const third = store.present();
    expect({
      same: again === first,
      first: shown(first),
      second: shown(second),
      third: shown(third),
    }).toEqual({
      same: true,
      first: ["a@1", "b@2", "c@3"],
      second: ["a@1", "b@10", "c@3", "d@11"],
      third: ["b@10", "c@3", "d@11"],
    });
  });

  it("holds what the store holds after any run of changes, and never changes an array it gave", () => {
    const names = ["a", "b", "c", "d", "e"];
    const op = fc.oneof(
      fc.record({ kind: fc.constantFrom("upsert", "delete"), name: fc.constantFrom(...names) }),
      fc.record({ kind: fc.constant("present") }),
      fc.record({ kind: fc.constant("unwatch"), name: fc.constantFrom(...names) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        let watching = [...names];
        const store = storeWatching(watching);
        const given: [ReturnType<SecretStore["present"]>, string[]][] = [];
        let rv = 0;
        for (const o of ops) {
          if (o.kind === "present") {
            const list = store.present();
            given.push([list, shown(list)]);
          } else if (o.kind === "unwatch") {
            watching = watching.filter((n) => n !== o.name);
            const watched = new SecretIndex<ReadKeys>();
            for (const n of watching) watched.set("ns", n, tokens);
            store.setWatched(watched);
          } else store.apply(o.kind, secret(o.name, ++rv), "watch");
        }
        const held = [...store.lookup.entries()].map(
          ([, name, s]) => `${name}@${s.resourceVersion}`,
        );
        expect(shown(store.present()).sort()).toEqual(held.sort());
        for (const [list, then] of given) expect(shown(list)).toEqual(then);
      }),
      { numRuns: 200 },
    );
  });
});
