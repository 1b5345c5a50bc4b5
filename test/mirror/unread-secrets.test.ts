// A held Secret a newly referenced key was not read from, because its GET found it gone (404): the
// store keeps it as it arrived until the watch tells of the deletion, and the mirror's inputs are
// not one whole meanwhile, so no state file saves it as read for that key. Seed 572 of the chaos
// check (replica restarts): saved so, a warm start served `key-missing` at a version that had it.

import { describe, expect, it } from "vitest";
import { listArray } from "../../src/mirror/listed-index.ts";
import { SecretStore } from "../../src/mirror/secret-store.ts";
import { deriveWatchedSet } from "../../src/mirror/watched-set.ts";
import { ok } from "../../src/result.ts";
import { FakeListWatch, page, secret } from "../support/fake-list-watch.ts";
import { waitUntil } from "../support/wait.ts";
import { savingMirror } from "../support/warm-mirror.ts";
import {
  type AppInput,
  REGISTRY_KEY,
  REGISTRY_NAME,
  REGISTRY_NS,
  registryDoc,
  registryOf,
} from "../support/world.ts";

/** The App reads `key` of Secret `ns/shop-credentials`, with a credential (its bytes kept). */
const shop = (key: string): AppInput => ({
  name: "shop",
  hostnames: ["shop.example.com"],
  namespace: "ns",
  key,
  credential: {},
});
const watching = (key: string) =>
  deriveWatchedSet(registryOf([shop(key)], REGISTRY_NS), { serveCredentials: true });
const SHOP_SECRET = (rv: string) => secret("shop-credentials", rv, { token: "t" }, "ns");

describe("SecretStore.holdsUnread", () => {
  it("is true from a watched set reading a key the held Secret was not read for, until it is read or deleted", () => {
    const store = new SecretStore();
    store.setWatched(watching("alt"));
    store.apply("upsert", SHOP_SECRET("9"), "watch");
    const seen = [store.holdsUnread];
    store.setWatched(watching("token"));
    seen.push(store.holdsUnread);
    store.apply("delete", SHOP_SECRET("10"), "watch");
    seen.push(store.holdsUnread);
    store.apply("upsert", SHOP_SECRET("11"), "watch");
    store.setWatched(watching("alt"));
    store.setWatched(watching("token"));
    seen.push(store.holdsUnread);
    store.apply("upsert", SHOP_SECRET("11"), "get");
    seen.push(store.holdsUnread);
    expect(seen).toEqual([false, true, false, true, false]);
  });
});

describe("a mirror whose fetch of a newly read key finds the Secret gone", () => {
  it("saves no inputs until the watch tells of the deletion", async () => {
    const registry = new FakeListWatch();
    const value = (key: string) => JSON.stringify(registryDoc([shop(key)]));
    const registrySecret = (rv: string, key: string) =>
      secret(REGISTRY_NAME, rv, { [REGISTRY_KEY]: value(key) }, REGISTRY_NS);
    registry.replyList(ok(page("5", [registrySecret("4", "alt")])));
    const secrets = new FakeListWatch();
    secrets.replyList(ok(page("9", [SHOP_SECRET("9")])));
    // The GET for `token` finds nothing: the Secret was deleted, and the watch has not said so.
    const { mirror, published } = savingMirror(registry, secrets, { serveCredentials: true });
    mirror.start();
    try {
      await waitUntil(() => (published.length > 0 ? true : undefined));
      registry.current.modify(registrySecret("10", "token"));
      await waitUntil(() => (published.length > 1 ? true : undefined));
      await mirror.idle();
      const beforeDeletion = published.length;
      secrets.current.delete(SHOP_SECRET("11"));
      await waitUntil(() => (published.length > beforeDeletion ? true : undefined));
      await mirror.idle();
      const saved = (i: number) => {
        const inputs = published[i];
        return inputs === null || inputs === undefined
          ? null
          : listArray(inputs.secrets).map((s) => `${s.name}@${s.resourceVersion}`);
      };
      expect({
        first: saved(0),
        unread: published.slice(1, beforeDeletion).map((_, i) => saved(i + 1)),
        deleted: saved(published.length - 1),
      }).toEqual({
        first: ["shop-credentials@9"],
        // The Registry reading `token` adopted: its Snapshot, published unread.
        unread: [null],
        deleted: [],
      });
    } finally {
      await mirror.stop();
    }
  });
});
