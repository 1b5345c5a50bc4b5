import type { Envtest } from "@replica-mirror/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createListWatch } from "../../src/kube/rest/client.ts";
import type { KubeTransport } from "../../src/kube/rest/transport.ts";
import { RETRY_DELAYS_MS, ReferencedSecrets } from "../../src/mirror/referenced-secrets.ts";
import { UNKEPT_VALUE } from "../../src/snapshot/types.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
  type AppInput,
  envtestFor,
  registryOf,
  transportFor,
  writeSecret,
} from "../support/world.ts";

let envtest: Envtest;
let transport: KubeTransport;
let closeTransport: () => Promise<void>;
let referenced: ReferencedSecrets | undefined;

beforeEach(async () => {
  envtest = await envtestFor();
  ({ transport, close: closeTransport } = await transportFor(envtest));
  writeSecret(envtest, "tenant-a", "shop-credentials", { token: "s" }, { mirror: "yes" });
  writeSecret(envtest, "tenant-b", "blog-credentials", { token: "b" });
});
afterEach(async () => {
  referenced?.stop();
  referenced = undefined;
  await closeTransport();
  await envtest.close();
});

// Served credentials: their values are kept (ADR 68), so `kept` shows the bytes fetched.
const shop: AppInput = {
  name: "shop",
  hostnames: ["shop.x"],
  namespace: "tenant-a",
  credential: {},
};
const blog: AppInput = {
  name: "blog",
  hostnames: ["blog.x"],
  namespace: "tenant-b",
  credential: {},
};
const registry = (...apps: AppInput[]) => registryOf(apps);

/** A ReferencedSecrets over one cluster-wide scope of envtest, on a manual clock. */
function start(options: { labelSelector?: string; schedule?: (run: () => void) => void } = {}) {
  const clock = new FakeClock();
  const told = { fetchFailed: [] as string[], retryDue: 0 };
  const listWatch = createListWatch(
    transport,
    options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector },
  );
  referenced = new ReferencedSecrets({
    scopes: [{ namespace: null, listWatch }],
    clock,
    observer: { fetchFailed: (count, message) => told.fetchFailed.push(`${count} ${message}`) },
    served: { serveCredentials: true },
    onRetryDue: () => told.retryDue++,
    ...(options.schedule === undefined ? {} : { schedule: options.schedule }),
  });
  return { referenced, clock, told };
}

/** A watch event that stores `token` as the Secret's value, at resourceVersion 1. */
const fromWatch = (r: ReferencedSecrets, namespace: string, name: string, token: string) =>
  r.store.apply(
    "upsert",
    { metadata: { namespace, name, resourceVersion: "1" }, data: { token } },
    "watch",
  );

const kept = (r: ReferencedSecrets) =>
  [...r.store.lookup.entries()].map(
    ([namespace, name, s]) => `${namespace}/${name} ${s.data.token}`,
  );
const requests = () =>
  envtest.requests.entries().map((e) => `${e.verb} ${e.namespace ?? "*"}/${e.name ?? ""}`);

describe("ReferencedSecrets", () => {
  it("keeps a value no credential reads as present only, and fetches it once one does", async () => {
    const { referenced: r } = start();
    const { credential: _, ...plainShop } = shop;
    r.watch(registry(plainShop));
    fromWatch(r, "tenant-a", "shop-credentials", "s");
    const before = kept(r);
    const added = await r.follow(registry(shop));
    expect({ before, added, after: kept(r), requests: requests() }).toEqual({
      before: [`tenant-a/shop-credentials ${UNKEPT_VALUE}`],
      added: [{ namespace: "tenant-a", name: "shop-credentials" }],
      after: ["tenant-a/shop-credentials s"],
      requests: ["get tenant-a/shop-credentials"],
    });
  });

  it("fetches the Secrets a new Registry adds, and keeps nothing of those it drops", async () => {
    const { referenced: r } = start();
    r.watch(registry(shop));
    const added = await r.follow(registry(shop, blog));
    const keptWithBoth = kept(r);
    const droppedBlog = await r.follow(registry(shop));
    expect({ added, keptWithBoth, droppedBlog, left: kept(r), requests: requests() }).toEqual({
      added: [{ namespace: "tenant-b", name: "blog-credentials" }],
      keptWithBoth: ["tenant-b/blog-credentials b"],
      droppedBlog: [],
      left: [],
      requests: ["get tenant-b/blog-credentials"],
    });
  });

  it("while it fetches an added Secret, keeps what the served Registry's Secrets hold and watches the added one", async () => {
    const { referenced: r } = start();
    r.watch(registry(shop));
    await r.follow(registry(shop));
    fromWatch(r, "tenant-a", "shop-credentials", "s");
    const following = r.follow(registry(blog));
    const watched = () =>
      ["tenant-a/shop-credentials", "tenant-b/blog-credentials"].filter((ref) => {
        const [namespace, name] = ref.split("/") as [string, string];
        return r.store.isWatched(namespace, name);
      });
    const during = { watched: watched(), kept: kept(r) };
    const added = await following;
    expect({ during, added, after: { watched: watched(), kept: kept(r) } }).toEqual({
      during: {
        watched: ["tenant-a/shop-credentials", "tenant-b/blog-credentials"],
        kept: ["tenant-a/shop-credentials s"],
      },
      added: [{ namespace: "tenant-b", name: "blog-credentials" }],
      after: { watched: ["tenant-b/blog-credentials"], kept: ["tenant-b/blog-credentials b"] },
    });
  });

  it("drops what a new Registry no longer reads a turn after deriving it, as a fetch would", async () => {
    const turns: (() => void)[] = [];
    const { referenced: r } = start({ schedule: (run) => turns.push(run) });
    r.watch(registry(shop, blog));
    fromWatch(r, "tenant-b", "blog-credentials", "b");
    const following = r.follow(registry(shop));
    const before = { kept: kept(r), turns: turns.length };
    turns.shift()?.();
    const added = await following;
    expect({ before, added, after: kept(r) }).toEqual({
      before: { kept: ["tenant-b/blog-credentials b"], turns: 1 },
      added: [],
      after: [],
    });
  });

  it("fetches one name-selected list per Secret when a label selector is set, and stores only what it selects", async () => {
    const { referenced: r } = start({ labelSelector: "mirror=yes" });
    r.watch(null);
    const added = await r.follow(registry(shop, blog));
    expect({ added, kept: kept(r), requests: requests().sort() }).toEqual({
      added: [{ namespace: "tenant-a", name: "shop-credentials" }],
      kept: ["tenant-a/shop-credentials s"],
      requests: ["list tenant-a/", "list tenant-b/"],
    });
  });

  it("fetches a thousand added Secrets with a thousand GETs, never a list of the cluster", async () => {
    for (let i = 0; i < 1_000; i++)
      writeSecret(envtest, "tenant-c", `app-${i}-credentials`, { token: `t${i}` });
    for (let i = 0; i < 200; i++) writeSecret(envtest, "tenant-c", `unreferenced-${i}`, { x: "y" });
    const { referenced: r } = start();
    r.watch(null);
    const apps = Array.from({ length: 1_000 }, (_, i) => ({
      name: `app-${i}`,
      hostnames: [`app-${i}.x`],
      namespace: "tenant-c",
    }));
    const added = await r.follow(registryOf(apps));
    const verbs = new Map<string, number>();
    for (const e of envtest.requests.entries()) verbs.set(e.verb, (verbs.get(e.verb) ?? 0) + 1);
    expect({ added: added.length, kept: kept(r).length, verbs: [...verbs] }).toEqual({
      added: 1_000,
      kept: 1_000,
      verbs: [["get", 1_000]],
    });
  });

  it("retries a failed fetch on the schedule, and only once the retry is due", async () => {
    const { referenced: r, clock, told } = start();
    envtest.faults.failNext({ verb: "get", count: 2, status: 500 });
    r.watch(null);
    const steps: unknown[] = [await r.follow(registry(shop)), clock.pending()];
    steps.push(await r.retryFailed(), told.retryDue);
    await clock.advance(RETRY_DELAYS_MS[0]!);
    steps.push(told.retryDue, await r.retryFailed(), clock.pending());
    await clock.advance(RETRY_DELAYS_MS[1]!);
    steps.push(await r.retryFailed(), clock.pending(), kept(r));
    expect({ steps, failures: told.fetchFailed.map((f) => f.slice(0, 10)) }).toEqual({
      steps: [
        [],
        [1_000],
        [],
        0,
        1,
        [],
        [2_000],
        [{ namespace: "tenant-a", name: "shop-credentials" }],
        [],
        ["tenant-a/shop-credentials s"],
      ],
      failures: ["1 HTTP 500", "1 HTTP 500"],
    });
  });

  it("retries a throttled fetch no sooner than its Retry-After", async () => {
    const { referenced: r, clock } = start();
    envtest.faults.failNext({ verb: "get", count: 1, status: 429, retryAfterSeconds: 3 });
    r.watch(null);
    await r.follow(registry(shop));
    expect(clock.pending()).toEqual([3_000]);
  });

  it("forgets a failed fetch once the Registry no longer references the Secret", async () => {
    const { referenced: r, clock } = start();
    envtest.faults.failNext({ verb: "get", count: 1, status: 500 });
    r.watch(null);
    await r.follow(registry(shop));
    await r.follow(registry());
    await clock.advance(RETRY_DELAYS_MS[0]!);
    expect({ retried: await r.retryFailed(), requests: requests() }).toEqual({
      retried: [],
      requests: ["get tenant-a/shop-credentials"],
    });
  });
});
