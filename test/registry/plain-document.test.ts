import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRegistryDocument, validateRegistryDocument } from "../../src/registry/parse.ts";
import { readPlainRegistry } from "../../src/registry/plain-document.ts";
import { REGISTRY_API_VERSION } from "../support/world.ts";

const NS = "platform";
const name = fc.constantFrom("shop", "blog", "a-1", "x".repeat(63));
const badName = fc.constantFrom("", "Shop", "-a", "x".repeat(64), 5, null);
const host = fc.constantFrom(
  "shop.example.com",
  "*.shop.example.com",
  "a.b",
  "SHOP.example.",
  "bücher.example",
);
const badHost = fc.constantFrom("", "a..b", "host:80", "*", 7);
const secretName = fc.constantFrom("shop-credentials", "a.b-c");
const badSecretName = fc.constantFrom("a..b", "A", "", 3);
const key = fc.constantFrom("token", "t.k_-1", "...");
const badKey = fc.constantFrom(".", "..", "a/b", "", null);

function doc(good: boolean) {
  const pick = <T, U>(ok: fc.Arbitrary<T>, bad: fc.Arbitrary<U>) =>
    good ? ok : fc.oneof({ weight: 4, arbitrary: ok }, { weight: 1, arbitrary: bad });
  const app = fc.record(
    {
      name: pick(name, badName),
      hostnames: pick(
        fc.array(host, { minLength: 1, maxLength: 3 }),
        fc.oneof(fc.array(pick(host, badHost), { maxLength: 3 }), fc.constant("a.b")),
      ),
      secretRef: pick(
        fc.record(
          { namespace: fc.constantFrom("tenant-a", "b"), name: secretName, key },
          { requiredKeys: ["name", "key"] },
        ),
        fc.oneof(
          fc.record(
            {
              namespace: pick(fc.constantFrom("tenant-a", "b"), fc.constantFrom(null, "Bad")),
              name: pick(secretName, badSecretName),
              key: pick(key, badKey),
            },
            { requiredKeys: ["name", "key"] },
          ),
          fc.constant(null),
        ),
      ),
      upstream: pick(fc.constantFrom("http://shop:8080"), fc.constantFrom(5, null)),
      secretReady: pick(fc.boolean(), fc.constantFrom("yes", 1)),
      extra: fc.constantFrom({ anything: true }),
    },
    { requiredKeys: ["name", "hostnames", "secretRef"] },
  );
  return fc.record({
    apiVersion: pick(
      fc.constant(REGISTRY_API_VERSION),
      fc.constantFrom("replica-mirror/v0", undefined),
    ),
    // Unique names when good: a duplicate is an error the schema words.
    apps: good
      ? fc.uniqueArray(app, { selector: (a) => a.name, maxLength: 4 })
      : fc.array(app, { maxLength: 4 }),
  });
}

describe("readPlainRegistry", () => {
  it("vouches for a document only with the schema's own answer", () => {
    fc.assert(
      fc.property(doc(false), (d) => {
        const plain = readPlainRegistry(d, NS);
        const schema = validateRegistryDocument(d, NS);
        if (plain !== null) expect(schema).toEqual({ ok: true, value: plain });
        expect(parseRegistryDocument(d, NS)).toEqual(schema);
      }),
      { numRuns: 3000 },
    );
  });

  it("reads every valid document itself", () => {
    fc.assert(
      fc.property(doc(true), (d) => {
        const plain = readPlainRegistry(d, NS);
        expect(plain).not.toBeNull();
        expect(validateRegistryDocument(d, NS)).toEqual({ ok: true, value: plain });
      }),
      { numRuns: 1000 },
    );
  });

  it("leaves a duplicate App name to the schema, which words it", () => {
    const app = { name: "shop", hostnames: ["a.b"], secretRef: { name: "s", key: "k" } };
    const d = { apiVersion: REGISTRY_API_VERSION, apps: [app, app] };
    expect(readPlainRegistry(d, NS)).toBeNull();
    expect(parseRegistryDocument(d, NS)).toEqual({
      ok: false,
      error: {
        message: "invalid registry: apps[1].name: duplicate App name 'shop' (first at apps[0])",
        issues: ["apps[1].name: duplicate App name 'shop' (first at apps[0])"],
      },
    });
  });
});
