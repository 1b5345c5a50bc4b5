// A Registry value's check lands later than its event (ADR 88): the Registry in service stays the
// previous one meanwhile, the newest value wins, an older one is checked only when the newest
// needs it, and the first Snapshot waits for the first check.

import { afterEach, describe, expect, it } from "vitest";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import { Mirror } from "../../src/mirror/mirror.ts";
import { RegistryTracker } from "../../src/mirror/registry-tracker.ts";
import { ok } from "../../src/result.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { listApps } from "../../src/snapshot/lookup.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { DeferredChecker } from "../support/deferred-checker.ts";
import { FakeListWatch, page, secret } from "../support/fake-list-watch.ts";
import { waitUntil } from "../support/wait.ts";
import {
  type AppInput,
  REGISTRY_KEY,
  REGISTRY_NAME,
  REGISTRY_NS,
  registryDoc,
  registrySource,
} from "../support/world.ts";

const app = (name: string, extra: Partial<AppInput> = {}): AppInput => ({
  name,
  hostnames: [`${name}.example.com`],
  namespace: "default",
  ...extra,
});
const value = (...apps: AppInput[]) => JSON.stringify(registryDoc(apps));
const BAD = JSON.stringify({ apiVersion: "nope" });

/** A value by the names of its Apps ("bad" for a value refused whole). */
const label = (v: string): string => {
  const doc = JSON.parse(v) as { apps?: { name?: unknown }[] };
  return doc.apps?.map((a) => String(a.name)).join("+") ?? "bad";
};

const event = (resourceVersion: string, v: string) => ({
  metadata: { namespace: REGISTRY_NS, name: REGISTRY_NAME, resourceVersion },
  data: { [REGISTRY_KEY]: v },
});

const names = (served: { registry: { apps: readonly { name: string }[] } | null }) =>
  served.registry?.apps.map((a) => a.name) ?? null;

describe("RegistryTracker with checks that land later", () => {
  const tracker = (checker: DeferredChecker) =>
    new RegistryTracker({ ...registrySource(new FakeListWatch()), checker });

  /** A tracker that served `first`, and its checker. */
  async function serving(first: string) {
    const checker = new DeferredChecker(label);
    const t = tracker(checker);
    t.observe(false, event("1", first));
    const served = t.serve();
    await checker.land();
    await served;
    return { t, checker };
  }

  it("keeps what it served until a check lands, then serves the newest value; older values delivered meanwhile are not checked", async () => {
    const { t, checker } = await serving(value(app("a")));
    t.observe(false, event("2", value(app("b"))));
    const serving2 = t.serve();
    t.observe(false, event("3", value(app("c"))));
    t.observe(false, event("4", value(app("d"))));
    await new Promise(setImmediate);
    const meanwhile = { served: names({ registry: t.served }), waiting: checker.waiting };
    await checker.land();
    await checker.land();
    const served = await serving2;
    expect({
      meanwhile,
      asked: checker.asked,
      served: names(served),
      resourceVersion: served.status.resourceVersion,
      unserved: t.hasUnserved,
    }).toEqual({
      meanwhile: { served: ["a"], waiting: ["b"] },
      asked: ["a", "b", "d"],
      served: ["d"],
      resourceVersion: "4",
      unserved: false,
    });
  });

  it("keeps the last good value when the newest is refused, checking the older one only then", async () => {
    const { t, checker } = await serving(value(app("a")));
    t.observe(false, event("2", value(app("b"))));
    t.observe(false, event("3", BAD));
    const serving2 = t.serve();
    await new Promise(setImmediate);
    const first = checker.waiting;
    await checker.land();
    await checker.land();
    const served = await serving2;
    expect({
      first,
      asked: checker.asked,
      served: names(served),
      error: served.status.error?.slice(0, 25),
      newlyRefused: served.newlyRefused,
    }).toEqual({
      first: ["bad"],
      asked: ["a", "bad", "b"],
      served: ["b"],
      error: "invalid registry: apiVers",
      newlyRefused: true,
    });
  });

  it("keeps a refused App entry's version from an older value delivered while the newest was checked", async () => {
    const { t, checker } = await serving(value(app("a")));
    const b1 = app("b", { upstream: "http://b1.example.com" });
    t.observe(false, event("2", value(app("a"), b1)));
    t.observe(false, event("3", value(app("a"), app("b", { hostnames: ["b.example.com:80"] }))));
    const serving2 = t.serve();
    await checker.land();
    await checker.land();
    const served = await serving2;
    expect({
      apps: served.registry?.apps.map((a) => `${a.name} ${a.upstream}`),
      refused: served.status.refusedApps.map((r) => `${r.name} kept:${r.kept}`),
      asked: checker.asked,
    }).toEqual({
      apps: ["a null", "b http://b1.example.com"],
      refused: ["b kept:true"],
      asked: ["a", "a+b", "a+b"],
    });
  });

  it("checks each distinct good value once", async () => {
    const { t, checker } = await serving(value(app("a")));
    t.observe(false, event("2", value(app("a"))));
    const again = await t.serve();
    expect({ asked: checker.asked, rv: again.status.resourceVersion }).toEqual({
      asked: ["a"],
      rv: "2",
    });
  });
});

describe("a mirror whose Registry checks land later", () => {
  const mirrors: Mirror[] = [];
  afterEach(async () => {
    await Promise.all(mirrors.splice(0).map((m) => m.stop()));
  });

  /** Each App of a Snapshot with its readiness and Secret version. */
  const shown = (s: Snapshot | null) =>
    s === null ? null : listApps(s).map((a) => `${a.name} ${a.reason ?? "ready"}`);

  function started(secrets: FakeListWatch, served: { serveCredentials?: boolean } = {}) {
    const registry = new FakeListWatch();
    const shop = app("shop", served.serveCredentials === true ? { credential: {} } : {});
    registry.replyList(ok(page("5", [event("5", value(shop))])));
    const checker = new DeferredChecker(label);
    const holder = new SnapshotHolder();
    const mirror = new Mirror({
      registry: { ...registrySource(registry), checker },
      secrets: { scopes: [{ namespace: null, listWatch: secrets }] },
      holder,
      watchTimeoutSeconds: 60,
      reflector: { streamingLists: new StreamingLists(false) },
      ...served,
    });
    mirrors.push(mirror);
    mirror.start();
    return { registry, checker, holder, mirror };
  }

  it("lists the App Secrets only once the first Registry's check landed, then publishes", async () => {
    const secrets = new FakeListWatch();
    secrets.replyList(
      ok(page("7", [secret("shop-credentials", "6", { token: "t" }), secret("other", "6")])),
    );
    const { checker, holder, mirror } = started(secrets);
    await waitUntil(() => (checker.waiting.length > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const requests = () => secrets.listCalls.length + secrets.watches.length;
    const before = { snapshot: holder.current(), waiting: checker.waiting, requests: requests() };
    await checker.land();
    await waitUntil(() => holder.current() ?? undefined);
    await mirror.idle();
    expect({ before, after: shown(holder.current()), requested: requests() > 0 }).toEqual({
      before: { snapshot: null, waiting: ["shop"], requests: 0 },
      after: ["shop ready"],
      requested: true,
    });
  });

  it("keeps the bytes of a credential it serves from the list that follows a check landing later", async () => {
    const secrets = new FakeListWatch();
    secrets.replyList(ok(page("7", [secret("shop-credentials", "6", { token: "t0k" })])));
    const { checker, holder, mirror } = started(secrets, { serveCredentials: true });
    await waitUntil(() => (checker.waiting.length > 0 ? true : undefined));
    await checker.land();
    await waitUntil(() => holder.current() ?? undefined);
    await mirror.idle();
    expect(listApps(holder.current()!).map((a) => [a.name, a.reason, a.secretValue])).toEqual([
      ["shop", null, "t0k"],
    ]);
  });

  it("serves the previous Registry, and publishes Secret changes, until a new value's check lands", async () => {
    const secrets = new FakeListWatch();
    secrets.replyList(ok(page("7", [secret("shop-credentials", "6", { token: "t" })])));
    const { registry, checker, holder, mirror } = started(secrets);
    await waitUntil(() => (checker.waiting.length > 0 ? true : undefined));
    await checker.land();
    await waitUntil(() => holder.current() ?? undefined);
    await waitUntil(() =>
      registry.watches.length > 0 && secrets.watches.length > 0 ? true : undefined,
    );
    registry.current.modify(event("8", value(app("shop"), app("blog"))));
    await waitUntil(() => (checker.waiting.length > 0 ? true : undefined));
    secrets.current.modify(secret("shop-credentials", "9", { token: "u" }));
    await waitUntil(() => (holder.current()!.revision === 2 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const meanwhile = { apps: shown(holder.current()), revision: holder.current()!.revision };
    await checker.land();
    await waitUntil(() => (holder.current()!.apps.size === 2 ? true : undefined));
    await mirror.idle();
    expect({
      meanwhile,
      after: shown(holder.current()),
      registryVersion: holder.current()!.registry.resourceVersion,
    }).toEqual({
      meanwhile: { apps: ["shop ready"], revision: 2 },
      after: ["blog secret-absent", "shop ready"],
      registryVersion: "8",
    });
  });
});
