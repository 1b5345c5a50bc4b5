// Outside names used as keys (Secret data keys, the Registry key) are read as own keys only: a
// name that Object.prototype also has (`constructor`, `toString`, `__proto__`, ...) is a key like
// any other, through both decoders, the store and the build.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SecretObject } from "../../src/kube/cache/list-watch.ts";
import { decodeSecret } from "../../src/kube/codec/wire.ts";
import { RegistryTracker } from "../../src/mirror/registry-tracker.ts";
import { SecretStore } from "../../src/mirror/secret-store.ts";
import { deriveWatchedSet } from "../../src/mirror/watched-set.ts";
import { build } from "../../src/snapshot/build.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import { meta, REGISTRY_API_VERSION, registryOf } from "../support/world.ts";

const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);
// Names an object literal or a prototype chain could answer for, and ordinary ones.
const keyName = fc.oneof(
  fc.constantFrom(...PROTOTYPE_NAMES),
  fc.stringMatching(/^[-._a-zA-Z0-9]{1,12}$/).filter((k) => k !== "." && k !== ".."),
);

/** A Secret as the JSON decoder hands it on, with `data` base64-encoded on the wire. */
function decoded(data: Record<string, string>): SecretObject {
  const wire = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
  );
  const json = JSON.parse(
    JSON.stringify({ metadata: { namespace: "apps", name: "s", resourceVersion: "1" } }).replace(
      /}$/,
      `,"data":{${Object.entries(wire)
        .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
        .join(",")}}}`,
    ),
  ) as unknown;
  const secret = decodeSecret(json);
  if (!secret.ok) throw new Error(secret.error.message);
  return secret.value;
}

/** How the App reading `key` of Secret `apps/s` is served, given the Secret's data. */
function appServed(key: string, data: Record<string, string>) {
  // A served credential: its value is kept (ADR 68), so the bytes read can be compared.
  const registry = registryOf([
    { name: "app", hostnames: ["app.example"], secret: "s", key, credential: {} },
  ]);
  const store = new SecretStore();
  store.setWatched(deriveWatchedSet(registry, { serveCredentials: true }));
  store.apply("upsert", decoded(data), "watch");
  const app = findApp(build(registry, store.lookup, { ...meta(), serveCredentials: true }), "app")!;
  return { ready: app.ready, reason: app.reason, value: app.secretValue };
}

describe("outside names as keys", () => {
  it("serves an App as its Secret's own keys say, whatever the key's name", () => {
    fc.assert(
      fc.property(keyName, keyName, fc.string({ minLength: 1 }), (key, other, value) => {
        const without = key === other ? {} : { [other]: "x" };
        expect(appServed(key, without)).toEqual({
          ready: false,
          reason: "key-missing",
          value: null,
        });
        expect(appServed(key, { ...without, [key]: value })).toEqual({
          ready: true,
          reason: null,
          value: Buffer.from(value).toString("latin1"),
        });
      }),
      { numRuns: 300, examples: PROTOTYPE_NAMES.map((n) => [n, "token", "v"]) },
    );
  });

  it("reads the Registry under any key name, and refuses it as missing when the Secret lacks it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROTOTYPE_NAMES), async (key) => {
        const doc = JSON.stringify({ apiVersion: REGISTRY_API_VERSION, apps: [] });
        const tracker = async (data: Record<string, string>) => {
          const t = new RegistryTracker({ key, namespace: "platform", name: "reg" });
          t.observe(false, {
            metadata: { namespace: "platform", name: "reg", resourceVersion: "1" },
            data: decoded(data).data!,
          });
          return (await t.serve()).status.error;
        };
        expect(await tracker({ other: doc })).toBe(
          `invalid registry: key '${key}' is missing from the Secret`,
        );
        expect(await tracker({ [key]: doc })).toBeNull();
      }),
      { numRuns: PROTOTYPE_NAMES.length * 2 },
    );
  });
});
