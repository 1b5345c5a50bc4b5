import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deleteSecret } from "../src/delete.ts";
import { listSecrets } from "../src/list.ts";
import { EnvtestState } from "../src/store.ts";
import { createSecret } from "../src/writes.ts";

const name = fc.stringMatching(/^[a-z][a-z0-9]{0,4}$/);
const ns = fc.constantFrom("a", "b", "c");
const write = fc.record({ ns, name, del: fc.boolean() });

function keysOf(
  state: EnvtestState,
  p: {
    limit?: string;
    continueToken?: string;
    resourceVersion?: string;
    resourceVersionMatch?: string;
  },
) {
  const r = listSecrets(state, { matches: () => true, filtered: false, ...p });
  if (!r.ok) throw new Error(r.failure.status.message);
  return r.value;
}

function apply(state: EnvtestState, w: { ns: string; name: string; del: boolean }) {
  if (w.del) deleteSecret(state, w.ns, w.name, {});
  else if (
    !createSecret(
      state,
      w.ns,
      { metadata: { name: w.name }, stringData: { v: "x" } },
      { manager: "t" },
    ).ok
  ) {
    deleteSecret(state, w.ns, w.name, {});
  }
}

describe("paging (property)", () => {
  it("concatenated pages equal the full list at the first page's resourceVersion, whatever is written between pages", () => {
    fc.assert(
      fc.property(
        fc.array(write, { maxLength: 40 }),
        fc.array(write, { maxLength: 40 }),
        fc.integer({ min: 1, max: 7 }),
        (before, during, limit) => {
          const state = new EnvtestState({ historySize: 1000 });
          for (const w of before) apply(state, w);
          const expected = keysOf(state, {}).items.map((s) => s.key);
          const got: string[] = [];
          let token: string | undefined;
          let i = 0;
          do {
            const page = keysOf(state, { limit: String(limit), continueToken: token });
            got.push(...page.items.map((s) => s.key));
            token = page.continueToken;
            const w = during[i++];
            if (w !== undefined) apply(state, w);
          } while (token !== undefined);
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("rebuilds the exact state at every retained resourceVersion, and refuses older ones", () => {
    fc.assert(
      fc.property(
        fc.array(write, { maxLength: 60 }),
        fc.integer({ min: 1, max: 30 }),
        (writes, historySize) => {
          const state = new EnvtestState({ historySize });
          const seen = new Map<number, string[]>([[state.resourceVersion, []]]);
          for (const w of writes) {
            apply(state, w);
            seen.set(
              state.resourceVersion,
              keysOf(state, {}).items.map((s) => `${s.key}@${s.obj.metadata.resourceVersion}`),
            );
          }
          for (const [rv, keys] of seen) {
            const snap = state.viewAt(rv);
            if (rv < state.history.compactedRv) {
              expect(snap.ok).toBe(false);
              continue;
            }
            if (!snap.ok) throw new Error(`rv ${rv} should be retained`);
            expect(
              snap.view.keys.map((k) => `${k}@${snap.view.get(k)?.obj.metadata.resourceVersion}`),
            ).toEqual(keys);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
