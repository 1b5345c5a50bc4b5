import { describe, expect, it } from "vitest";
import type { SecretObject } from "../../src/kube/cache/list-watch.ts";
import { RegistryTracker, serveRegistry } from "../../src/mirror/registry-tracker.ts";
import { compareResourceVersions } from "../../src/mirror/resource-version.ts";
import { SecretStore } from "../../src/mirror/secret-store.ts";
import { addedSecrets, deriveWatchedSet, unionOf } from "../../src/mirror/watched-set.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { ReadKeys } from "../../src/snapshot/types.ts";
import { UNKEPT_VALUE } from "../../src/snapshot/types.ts";
import { registryDoc, registryOf } from "../support/world.ts";

/** A Secret as the decoders hand it on: the token as a byte string (ADR 20). */
const secret = (name: string, rv: string, token?: string): SecretObject => ({
  metadata: { namespace: "ns", name, resourceVersion: rv },
  ...(token === undefined ? {} : { data: { token } }),
});

/** Keys read for their values, as a served credential reads its key. */
const valuesOf = (...keys: string[]): ReadKeys => ({ bytes: new Set(keys), presence: new Set() });

function storeWatching(...names: string[]): SecretStore {
  const store = new SecretStore();
  const watched = new SecretIndex<ReadKeys>();
  for (const n of names) watched.set("ns", n, valuesOf("token"));
  store.setWatched(watched);
  return store;
}

const contents = (store: SecretStore) =>
  [...store.lookup.entries()].map(([ns, name, v]) => [
    `${ns}/${name}`,
    v.resourceVersion,
    v.data.token,
  ]);

describe("SecretStore.apply", () => {
  it("ignores Secrets nobody references and keeps nothing of them", () => {
    const store = storeWatching("a");
    expect(store.apply("upsert", secret("b", "5", "x"), "watch")).toBe("ignored");
    expect(contents(store)).toEqual([]);
  });

  it("applies watch events in order: upsert, update, delete, recreate", () => {
    const store = storeWatching("a");
    expect([
      store.apply("upsert", secret("a", "5", "v1"), "watch"),
      store.apply("upsert", secret("a", "5", "v1"), "watch"),
      store.apply("upsert", secret("a", "6", "v2"), "watch"),
      store.apply("delete", secret("a", "7"), "watch"),
      store.apply("upsert", secret("a", "8", "v3"), "watch"),
    ]).toEqual(["changed", "unchanged", "changed", "changed", "changed"]);
    expect(contents(store)).toEqual([["ns/a", "8", "v3"]]);
  });

  it("never lets a GET that lost the race to the watch install older state", () => {
    const store = storeWatching("a");
    store.apply("delete", secret("a", "9"), "watch");
    expect(store.apply("upsert", secret("a", "8", "old"), "get")).toBe("unchanged");
    expect(contents(store)).toEqual([]);
    expect(store.apply("upsert", secret("a", "10", "new"), "get")).toBe("changed");
    expect(store.apply("upsert", secret("a", "9", "lagging"), "watch")).toBe("unchanged");
    expect(contents(store)).toEqual([["ns/a", "10", "new"]]);
  });

  it("takes the same resourceVersion again when a key referenced since was not kept", () => {
    const store = storeWatching("a");
    const read = {
      metadata: { namespace: "ns", name: "a", resourceVersion: "25" },
      data: { token: "t", alt: "x" },
    };
    const reading = (...keys: string[]) =>
      new SecretIndex<ReadKeys>().set("ns", "a", valuesOf(...keys));
    expect(store.apply("upsert", read, "watch")).toBe("changed");
    expect(store.apply("upsert", read, "get")).toBe("unchanged");
    // A Registry that now reads `alt` as well: the GET that follows brings what was dropped.
    store.setWatched(reading("token", "alt"));
    expect(store.apply("upsert", read, "get")).toBe("changed");
    expect({ ...store.lookup.get("ns", "a")?.data }).toEqual({ token: "t", alt: "x" });
    expect(store.apply("upsert", read, "get")).toBe("unchanged");
    // Reading fewer keys drops the others, and the same version is still no news.
    store.setWatched(reading("token"));
    expect(store.apply("upsert", read, "watch")).toBe("unchanged");
    expect({ ...store.lookup.get("ns", "a")?.data }).toEqual({ token: "t" });
  });

  it("drops everything kept for Secrets that leave the watched set", () => {
    const store = storeWatching("a", "b");
    store.apply("upsert", secret("a", "1", "x"), "watch");
    store.apply("upsert", secret("b", "2", "y"), "watch");
    const onlyB = new SecretIndex<ReadKeys>().set("ns", "b", valuesOf("token"));
    store.setWatched(onlyB);
    expect(contents(store)).toEqual([["ns/b", "2", "y"]]);
  });

  it("keeps only the values of referenced keys, on an object that inherits no member", () => {
    const store = storeWatching("a");
    const object = {
      metadata: { namespace: "ns", name: "a", resourceVersion: "1" },
      data: { token: "t", "tls.key": "private", constructor: "c" },
    };
    store.apply("upsert", object, "watch");
    const kept = store.lookup.get("ns", "a")!.data;
    expect({
      keys: Object.keys(kept),
      absent: ["constructor", "toString", "__proto__", "hasOwnProperty"].map((k) => kept[k]),
    }).toEqual({ keys: ["token"], absent: [undefined, undefined, undefined, undefined] });
    // A key read later is dropped too once no App reads it.
    store.setWatched(new SecretIndex<ReadKeys>().set("ns", "a", valuesOf("other")));
    expect(Object.keys(store.lookup.get("ns", "a")!.data)).toEqual([]);
  });

  it("copies the data it keeps", () => {
    const store = storeWatching("a");
    const data: Record<string, string> = { token: "x" };
    store.apply(
      "upsert",
      { metadata: { namespace: "ns", name: "a", resourceVersion: "1" }, data },
      "watch",
    );
    data.token = "changed";
    expect(contents(store)).toEqual([["ns/a", "1", "x"]]);
  });

  it("keeps every value as its bytes, one character per byte, under any key", () => {
    const store = new SecretStore();
    store.setWatched(
      new SecretIndex<ReadKeys>().set("ns", "a", valuesOf("token", "__proto__", "empty")),
    );
    const bytes = String.fromCharCode(0, 1, 127, 128, 200, 255);
    const data = JSON.parse(
      `{"token":${JSON.stringify(bytes)},"__proto__":"p","empty":""}`,
    ) as Record<string, string>;
    store.apply(
      "upsert",
      { metadata: { namespace: "ns", name: "a", resourceVersion: "1" }, data },
      "watch",
    );
    const kept = store.lookup.get("ns", "a")!.data;
    expect(Object.entries(kept)).toEqual([
      ["token", bytes],
      ["__proto__", "p"],
      ["empty", ""],
    ]);
    expect(Object.isFrozen(kept)).toBe(true);
  });
});

describe("SecretStore.reconcileList", () => {
  it("deletes held Secrets of the scope that a newer list does not hold, however they were learned", () => {
    const store = storeWatching(
      "watched-then-gone",
      "fetched-then-gone",
      "listed",
      "newer-than-list",
    );
    store.apply("upsert", secret("watched-then-gone", "3", "a"), "watch");
    store.apply("upsert", secret("fetched-then-gone", "14", "b"), "get");
    store.apply("upsert", secret("listed", "5", "c"), "watch");
    store.apply("upsert", secret("newer-than-list", "25", "d"), "get");
    const deleted = store.reconcileList("ns", new Set(["ns/listed"]), "20");
    expect({ deleted, left: contents(store) }).toEqual({
      deleted: [
        { namespace: "ns", name: "watched-then-gone" },
        { namespace: "ns", name: "fetched-then-gone" },
      ],
      left: [
        ["ns/listed", "5", "c"],
        ["ns/newer-than-list", "25", "d"],
      ],
    });
    // A GET that raced the list cannot bring the deleted one back with its old version.
    expect(store.apply("upsert", secret("fetched-then-gone", "14", "b"), "get")).toBe("unchanged");
  });

  it("leaves other namespaces alone when the list covers one namespace", () => {
    const store = storeWatching("a");
    store.apply("upsert", secret("a", "3", "x"), "watch");
    expect(store.reconcileList("elsewhere", new Set(), "20")).toEqual([]);
    expect(contents(store)).toEqual([["ns/a", "3", "x"]]);
  });
});

describe("compareResourceVersions", () => {
  it.each([
    ["9", "10", -1],
    ["10", "9", 1],
    ["42", "42", 0],
    ["abc", "abd", null],
  ])("orders %s and %s", (a, b, sign) => {
    const c = compareResourceVersions(a, b);
    expect(c === null ? null : Math.sign(c)).toBe(sign);
  });
});

/** A Registry value's content hash: 16 hex digits. */
const HASH = expect.stringMatching(/^[0-9a-f]{16}$/);

describe("watched set and registry state", () => {
  it("derives the referenced Secrets and what a new Registry adds", () => {
    const before = deriveWatchedSet(registryOf([{ name: "a", hostnames: ["a.x"], secret: "s1" }]));
    const after = deriveWatchedSet(
      registryOf([
        { name: "a", hostnames: ["a.x"], secret: "s1" },
        { name: "b", hostnames: ["b.x"], secret: "s2", namespace: "other" },
      ]),
    );
    expect(addedSecrets(before, after)).toEqual([{ namespace: "other", name: "s2" }]);
    expect(addedSecrets(after, before)).toEqual([]);
    // A key newly read from a Secret already watched: its bytes were never kept.
    const otherKey = deriveWatchedSet(
      registryOf([
        { name: "a", hostnames: ["a.x"], secret: "s1" },
        { name: "c", hostnames: ["c.x"], secret: "s1", key: "password" },
      ]),
    );
    expect(addedSecrets(before, otherKey)).toEqual([{ namespace: "apps", name: "s1" }]);
  });

  it("shares one set of keys among the Secrets read for the same keys, and unions them", () => {
    const watched = deriveWatchedSet(
      registryOf([
        { name: "a", hostnames: ["a.x"], secret: "s1" },
        { name: "b", hostnames: ["b.x"], secret: "s2" },
        { name: "c", hostnames: ["c.x"], secret: "s2", key: "password" },
        { name: "d", hostnames: ["d.x"], secret: "s3", key: "password" },
      ]),
    );
    const keys = (set: ReturnType<typeof deriveWatchedSet>) =>
      [...set.entries()].map(([ns, name, k]) => [`${ns}/${name}`, [...k.presence]]);
    expect(keys(watched)).toEqual([
      ["apps/s1", ["token"]],
      ["apps/s2", ["token", "password"]],
      ["apps/s3", ["password"]],
    ]);
    const next = deriveWatchedSet(registryOf([{ name: "e", hostnames: ["e.x"], secret: "s3" }]));
    const added = addedSecrets(watched, next);
    const union = unionOf(watched, next, added);
    expect({
      added,
      union: ["s1", "s2", "s3", "s4"].map((name) => [
        name,
        [...(union.get("apps", name)?.presence ?? [])],
      ]),
    }).toEqual({
      added: [{ namespace: "apps", name: "s3" }],
      union: [
        ["s1", ["token"]],
        ["s2", ["token", "password"]],
        ["s3", ["password", "token"]],
        ["s4", []],
      ],
    });
    // One set for every Secret read for `token` alone.
    const two = deriveWatchedSet(
      registryOf([
        { name: "a", hostnames: ["a.x"], secret: "s1" },
        { name: "b", hostnames: ["b.x"], secret: "s2" },
      ]),
    );
    expect(two.get("apps", "s1")).toBe(two.get("apps", "s2"));
  });

  it("serves an absent Registry as empty, and none for a malformed value or a missing key (the tracker keeps the last good one)", () => {
    const options = { key: "registry.json", namespace: "platform" };
    const good = registryOf([{ name: "a", hostnames: ["a.x"] }], "platform");
    const encoded = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("latin1");
    expect(serveRegistry({ present: false }, options)).toEqual({
      registry: null,
      status: {
        present: false,
        resourceVersion: null,
        error: null,
        refusedApps: [],
        contentHash: null,
      },
    });
    expect(serveRegistry({ present: true, resourceVersion: "3", value: null }, options)).toEqual({
      registry: null,
      status: {
        present: true,
        resourceVersion: "3",
        error: "invalid registry: key 'registry.json' is missing from the Secret",
        refusedApps: [],
        contentHash: null,
      },
    });
    expect(
      serveRegistry(
        { present: true, resourceVersion: "4", value: encoded({ apiVersion: "v0" }) },
        options,
      ).registry,
    ).toBeNull();
    expect(
      serveRegistry(
        {
          present: true,
          resourceVersion: "5",
          value: encoded(registryDoc([{ name: "a", hostnames: ["a.x"] }])),
        },
        options,
      ),
    ).toEqual({
      registry: good,
      status: {
        present: true,
        resourceVersion: "5",
        error: null,
        refusedApps: [],
        contentHash: HASH,
      },
    });
  });

  describe("RegistryTracker", () => {
    const event = (rv: string, value?: unknown) => ({
      metadata: { namespace: "platform", name: "reg", resourceVersion: rv },
      ...(value === undefined
        ? {}
        : { data: { "registry.json": Buffer.from(JSON.stringify(value)).toString("latin1") } }),
    });
    const good = registryDoc([{ name: "a", hostnames: ["a.x"] }]);
    const better = registryDoc([{ name: "b", hostnames: ["b.x"] }]);
    const bad = { apiVersion: "nope" };
    const badError =
      'invalid registry: apiVersion: must be "replica-mirror/v1"; apps: Invalid input: expected array, received undefined';
    const tracker = () =>
      new RegistryTracker({ key: "registry.json", namespace: "platform", name: "reg" });

    it("ignores other Secrets and parses each distinct good value once", async () => {
      const t = tracker();
      expect(
        t.observe(false, {
          metadata: { namespace: "platform", name: "other", resourceVersion: "1" },
        }),
      ).toBe(false);
      t.observe(false, event("1", good));
      const first = await t.serve();
      t.observe(false, event("2", good));
      const again = await t.serve();
      expect({
        same: again.registry === first.registry,
        status: again.status,
        newlyRefused: again.newlyRefused,
      }).toEqual({
        same: true,
        status: {
          present: true,
          resourceVersion: "2",
          error: null,
          refusedApps: [],
          contentHash: HASH,
        },
        newlyRefused: false,
      });
    });

    it("falls back to the newest good value delivered, even one no rebuild served", async () => {
      const t = tracker();
      t.observe(false, event("1", good));
      await t.serve();
      t.observe(false, event("2", better));
      t.observe(false, event("3", bad));
      const served = await t.serve();
      expect({
        apps: served.registry?.apps.map((a) => a.name),
        error: served.status.error,
        newlyRefused: served.newlyRefused,
      }).toEqual({
        apps: ["b"],
        error: badError,
        newlyRefused: true,
      });
    });

    it("serves an empty Registry for a refused value that follows a deletion", async () => {
      const t = tracker();
      t.observe(false, event("1", good));
      await t.serve();
      t.observe(true, event("2"));
      t.observe(false, event("3", bad));
      expect(await t.serve()).toEqual({
        registry: null,
        status: {
          present: true,
          resourceVersion: "3",
          error: badError,
          refusedApps: [],
          contentHash: HASH,
        },
        newlyRefused: true,
      });
    });

    it("reports each refused value once, also when its message repeats the previous one", async () => {
      const t = tracker();
      t.observe(false, event("1", bad));
      const flags = [(await t.serve()).newlyRefused];
      t.observe(false, event("2", bad));
      flags.push((await t.serve()).newlyRefused);
      t.observe(false, event("3", { ...bad, other: 1 }));
      flags.push((await t.serve()).newlyRefused);
      expect(flags).toEqual([true, false, true]);
    });
  });
});

describe("values read for their presence only (ADR 68)", () => {
  const presenceOf = (...keys: string[]): ReadKeys => ({
    bytes: new Set(),
    presence: new Set(keys),
  });
  const watching = (keys: ReadKeys) => new SecretIndex<ReadKeys>().set("ns", "a", keys);
  const object = (rv: string, data: Record<string, string>): SecretObject => ({
    metadata: { namespace: "ns", name: "a", resourceVersion: rv },
    data,
  });
  const held = (store: SecretStore) => ({ ...store.lookup.get("ns", "a")?.data });

  it("keeps whether a value is empty, never its bytes", () => {
    const store = new SecretStore();
    store.setWatched(watching(presenceOf("token", "empty", "absent")));
    store.apply("upsert", object("1", { token: "s3cr3t", empty: "", other: "x" }), "watch");
    expect(held(store)).toEqual({ token: UNKEPT_VALUE, empty: "" });
  });

  it("drops the bytes of a value no credential reads any more", () => {
    const store = new SecretStore();
    store.setWatched(watching(valuesOf("token")));
    store.apply("upsert", object("1", { token: "s3cr3t" }), "watch");
    store.setWatched(watching(presenceOf("token")));
    expect(held(store)).toEqual({ token: UNKEPT_VALUE });
    // Still kept for what is read now: the same version again is no news.
    expect(store.apply("upsert", object("1", { token: "s3cr3t" }), "watch")).toBe("unchanged");
  });

  it("takes the same version again once a credential reads a value kept for its presence", () => {
    const store = new SecretStore();
    store.setWatched(watching(presenceOf("token")));
    store.apply("upsert", object("1", { token: "s3cr3t" }), "watch");
    store.setWatched(watching(valuesOf("token")));
    expect(held(store)).toEqual({ token: UNKEPT_VALUE });
    expect(store.apply("upsert", object("1", { token: "s3cr3t" }), "get")).toBe("changed");
    expect(held(store)).toEqual({ token: "s3cr3t" });
  });

  it("does not count an unkept value handed back (a state file) as kept bytes", () => {
    const store = new SecretStore();
    store.setWatched(watching(valuesOf("token")));
    store.apply("upsert", object("1", { token: UNKEPT_VALUE }), "watch");
    expect(held(store)).toEqual({ token: UNKEPT_VALUE });
    expect(store.apply("upsert", object("1", { token: "s3cr3t" }), "get")).toBe("changed");
    expect(held(store)).toEqual({ token: "s3cr3t" });
  });

  it("reads a key for its value when any App's served credential reads it", () => {
    const apps = [
      { name: "a", hostnames: ["a.x"], secret: "s1" },
      { name: "b", hostnames: ["b.x"], secret: "s2" },
      { name: "c", hostnames: ["c.x"], secret: "s2", credential: { prefix: "Bearer " } },
    ];
    const how = (served: { serveCredentials?: boolean }) =>
      [...deriveWatchedSet(registryOf(apps), served).entries()].map(([, name, k]) => [
        name,
        [...k.bytes],
        [...k.presence],
      ]);
    expect(how({ serveCredentials: true })).toEqual([
      ["s1", [], ["token"]],
      ["s2", ["token"], []],
    ]);
    expect(how({})).toEqual([
      ["s1", [], ["token"]],
      ["s2", [], ["token"]],
    ]);
    // A credential served from now on reads bytes that were never kept: they are fetched.
    const before = deriveWatchedSet(registryOf(apps));
    const after = deriveWatchedSet(registryOf(apps), { serveCredentials: true });
    expect(addedSecrets(before, after)).toEqual([{ namespace: "apps", name: "s2" }]);
    expect(addedSecrets(after, before)).toEqual([]);
  });
});
