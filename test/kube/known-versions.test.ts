import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KnownVersions } from "../../src/kube/cache/known-versions.ts";
import type { SecretObject } from "../../src/kube/cache/list-watch.ts";

type Op =
  | { readonly kind: "listed" | "added" | "deleted"; readonly key: string; readonly rv: string }
  | { readonly kind: "remove" | "keep"; readonly keys: readonly string[] }
  | { readonly kind: "has"; readonly key: string };

const key = fc.constantFrom("a/x", "a/y", "b/x", "b/z", "c/w");
const rv = fc.constantFrom("1", "2", "3");
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("listed" as const, "added" as const, "deleted" as const),
    key,
    rv,
  }),
  fc.record({
    kind: fc.constantFrom("remove" as const, "keep" as const),
    keys: fc.uniqueArray(key),
  }),
  fc.record({ kind: fc.constant("has" as const), key }),
);

const object = (k: string, resourceVersion: string): SecretObject => {
  const [namespace, name] = k.split("/") as [string, string];
  return { metadata: { namespace, name, resourceVersion } };
};

/** The same calls on one map keyed by `namespace/name`, as the index was kept before. */
class Reference {
  readonly index = new Map<string, string>();
  listed(k: string, v: string) {
    const known = this.index.get(k);
    if (known === v) return undefined;
    this.index.set(k, v);
    return known === undefined ? "ADDED" : "MODIFIED";
  }
  remove(keys: readonly string[]) {
    return keys.flatMap((k) => {
      const known = this.index.get(k);
      if (known === undefined) return [];
      this.index.delete(k);
      return [object(k, known)];
    });
  }
  keep(keys: ReadonlySet<string>) {
    return this.remove([...this.index.keys()].filter((k) => !keys.has(k)));
  }
}

const byKey = (objects: readonly SecretObject[]) =>
  [...objects].sort((a, b) =>
    `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
      `${b.metadata.namespace}/${b.metadata.name}`,
    ),
  );

describe("the versions a reflector knows", () => {
  it("answer every call as a map keyed by namespace/name does", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(key, rv)), fc.array(op, { maxLength: 60 }), (seed, ops) => {
        const known = new KnownVersions();
        const reference = new Reference();
        const seeded = new Map(seed);
        known.seed(seeded);
        for (const [k, v] of seeded) reference.index.set(k, v);
        for (const o of ops) {
          let [got, want]: [unknown, unknown] = [undefined, undefined];
          if (o.kind === "listed") {
            got = known.listed(object(o.key, o.rv));
            want = reference.listed(o.key, o.rv);
          } else if (o.kind === "added" || o.kind === "deleted") {
            known.watched(o.kind === "added" ? "ADDED" : "DELETED", object(o.key, o.rv));
            if (o.kind === "added") reference.index.set(o.key, o.rv);
            else reference.index.delete(o.key);
          } else if (o.kind === "remove") {
            got = byKey(known.remove(o.keys));
            want = byKey(reference.remove(o.keys));
          } else if (o.kind === "keep") {
            // Its contract: every key kept was recorded (by the list that ends).
            const keep = new Set(o.keys.filter((k) => reference.index.has(k)));
            got = byKey(known.removeAllBut(keep));
            want = byKey(reference.keep(keep));
          } else if (o.kind === "has") {
            got = known.has(o.key);
            want = reference.index.has(o.key);
          }
          expect({ got, size: known.size }).toEqual({ got: want, size: reference.index.size });
        }
      }),
    );
  });
});
