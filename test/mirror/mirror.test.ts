import type { Envtest } from "@replica-mirror/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listApps, lookup } from "../../src/snapshot/lookup.ts";
import { assertConsistent } from "../support/consistency.ts";
import {
  appState,
  startTestSidecar,
  type TestSidecar,
  type TestSidecarOptions,
} from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import {
  credentialApp,
  envtestFor,
  REGISTRY_NAME,
  REGISTRY_NS,
  writeRegistry,
  writeSecret,
} from "../support/world.ts";

let envtest: Envtest;
const running: TestSidecar[] = [];
// Credentials served and declared: the mirror keeps the values, which these tests follow.
const start = async (options: TestSidecarOptions = {}) => {
  const flags = ["--serve-credentials", "true", ...(options.flags ?? [])];
  const m = await startTestSidecar(envtest, { ...options, flags });
  running.push(m);
  return m;
};

beforeEach(async () => {
  envtest = await envtestFor();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop()));
  await envtest.close();
});

const shop = credentialApp("shop", "tenant-a", ["shop.example.com", "*.shop.example.com"]);
const blog = credentialApp("blog", "tenant-b");

describe("mirror on envtest", () => {
  it("bootstraps with no Registry Secret: synced, empty, ready; then the Registry appears", async () => {
    const m = await start();
    const first = await waitUntil(() => m.holder.current() ?? undefined, {
      timeoutMs: 5000,
      what: "first Snapshot",
    });
    expect({ revision: first.revision, apps: listApps(first), registry: first.registry }).toEqual({
      revision: 1,
      apps: [],
      registry: {
        present: false,
        resourceVersion: null,
        error: null,
        refusedApps: [],
        contentHash: null,
      },
    });
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "t0" });
    writeRegistry(envtest, [shop]);
    await waitUntil(() =>
      lookup(m.holder.current()!, "shop.example.com").kind === "found" ? true : undefined,
    );
    expect(appState(m.holder, "shop")).toEqual({ ready: true, value: "t0", reason: null });
  });

  it("publishes nothing before both lists completed, then exactly the cluster's state", async () => {
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "t0" });
    writeRegistry(envtest, [shop, blog]);
    // The order the mirror reports in: each reflector's first list, then the first publication.
    const events: string[] = [];
    const m = await start({
      observer: {
        reflector: (name, status) => {
          if (status.kind === "listed") events.push(`listed ${name}`);
        },
        published: ({ snapshot }) => events.push(`published ${snapshot.revision}`),
      },
    });
    const s = await waitUntil(() => m.holder.current() ?? undefined);
    expect(s.revision).toBe(1);
    expect(events.slice(0, 3)).toEqual(["listed registry", "listed secrets/*", "published 1"]);
    expect([appState(m.holder, "shop"), appState(m.holder, "blog")]).toEqual([
      { ready: true, value: "t0", reason: null },
      { ready: false, value: null, reason: "secret-absent" },
    ]);
  });

  it("flips an App on delete, recreate, key removal and empty value, keeping the App", async () => {
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "v1" });
    writeRegistry(envtest, [shop]);
    const m = await start();
    await waitUntil(() => (appState(m.holder, "shop") !== "not-synced" ? true : undefined));
    const states: unknown[] = [];
    const step = async (write: () => void, expected: object) => {
      write();
      states.push(
        await waitUntil(
          () => {
            const st = appState(m.holder, "shop");
            return JSON.stringify(st) === JSON.stringify(expected) ? st : undefined;
          },
          { timeoutMs: 5000, what: JSON.stringify(expected) },
        ),
      );
    };
    await step(() => envtest.delete("tenant-a", "shop-credentials"), {
      ready: false,
      value: null,
      reason: "secret-absent",
    });
    await step(() => writeSecret(envtest, "tenant-a", "shop-credentials", { token: "v2" }), {
      ready: true,
      value: "v2",
      reason: null,
    });
    await step(
      () => {
        envtest.delete("tenant-a", "shop-credentials");
        writeSecret(envtest, "tenant-a", "shop-credentials", { other: "x" });
      },
      { ready: false, value: null, reason: "key-missing" },
    );
    await step(() => writeSecret(envtest, "tenant-a", "shop-credentials", { token: "" }), {
      ready: false,
      value: null,
      reason: "value-empty",
    });
    await step(() => writeSecret(envtest, "tenant-a", "shop-credentials", { token: "v3" }), {
      ready: true,
      value: "v3",
      reason: null,
    });
    expect(states).toHaveLength(5);
    expect(lookup(m.holder.current()!, "a.shop.example.com").kind).toBe("found");
  });

  it("swaps a new Snapshot object per change, and every read during Registry churn is consistent", async () => {
    writeRegistry(envtest, [shop]);
    const m = await start();
    const first = await waitUntil(() => m.holder.current() ?? undefined);
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "x" });
    const second = await waitUntil(() =>
      m.holder.current() !== first ? m.holder.current()! : undefined,
    );
    expect(second.revision).toBe(first.revision + 1);
    expect(first.revision).toBe(1);

    let reads = 0;
    let last = second.revision;
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const s = m.holder.current()!;
        assertConsistent(s);
        expect(s.revision).toBeGreaterThanOrEqual(last);
        last = s.revision;
        reads++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    const until = Date.now() + 2_000;
    for (let i = 0; Date.now() < until; i++) {
      const apps = Array.from({ length: 1 + (i % 7) }, (_, k) => ({
        name: `app-${k}`,
        hostnames: [`h${(k + i) % 5}.example.com`, `*.w${k % 3}.example.com`],
        namespace: "tenant-a",
        secret: `s${(k + i) % 4}`,
        credential: {},
      }));
      writeRegistry(envtest, apps);
      writeSecret(envtest, "tenant-a", `s${i % 4}`, { token: i % 3 === 0 ? "" : `v${i}` });
      await new Promise((r) => setTimeout(r, 3));
    }
    reading = false;
    await reader;
    expect(reads).toBeGreaterThan(100);
  });

  it("coalesces a burst of 10 changes into at most 2 rebuilds after the first", async () => {
    const apps = Array.from({ length: 10 }, (_, i) => ({
      name: `a${i}`,
      hostnames: [`a${i}.example`],
      namespace: "tenant-a",
      secret: `s${i}`,
      credential: {},
    }));
    writeRegistry(envtest, apps);
    const m = await start();
    await waitUntil(() => m.holder.current() ?? undefined);
    await m.mirror.idle();
    const before = m.mirror.stats().rebuilds;
    for (let i = 0; i < 10; i++) writeSecret(envtest, "tenant-a", `s${i}`, { token: `burst-${i}` });
    await waitUntil(() =>
      apps.every(
        (a, i) =>
          JSON.stringify(appState(m.holder, a.name)) ===
          JSON.stringify({ ready: true, value: `burst-${i}`, reason: null }),
      )
        ? true
        : undefined,
    );
    await m.mirror.idle();
    expect(m.mirror.stats().rebuilds - before).toBeLessThanOrEqual(2);
  });

  it("rebuilds nothing for 10,000 writes to Secrets no App references, and keeps none of their data", async () => {
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "x" });
    writeRegistry(envtest, [shop]);
    const m = await start();
    await waitUntil(() => m.holder.current() ?? undefined);
    await m.mirror.idle();
    const before = { ...m.mirror.stats(), snapshot: m.holder.current() };
    for (let i = 0; i < 10_000; i++) {
      writeSecret(envtest, `noise-${i % 10}`, `unrelated-${i % 500}`, { token: `n${i}` });
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    // The last unrelated write is followed by a related one: once it is visible, every earlier event was seen.
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "after" });
    await waitUntil(
      () => (JSON.stringify(appState(m.holder, "shop")).includes("after") ? true : undefined),
      { timeoutMs: 20_000 },
    );
    await m.mirror.idle();
    expect(m.mirror.stats().rebuilds - before.rebuilds).toBe(1);
  });

  it("fetches a Secret whose bytes were dropped when the Registry starts referencing it", async () => {
    writeSecret(envtest, "tenant-b", "blog-credentials", { token: "blog-v1" });
    writeRegistry(envtest, [shop]);
    const m = await start();
    await waitUntil(() => m.holder.current() ?? undefined);
    writeSecret(envtest, "tenant-b", "blog-credentials", { token: "blog-v2" });
    writeRegistry(envtest, [shop, blog]);
    const blogState = await waitUntil(() => {
      const s = appState(m.holder, "blog");
      return typeof s === "object" && s.ready ? s : undefined;
    });
    expect(blogState).toEqual({ ready: true, value: "blog-v2", reason: null });
    expect(
      envtest.requests.entries().some((e) => e.verb === "get" && e.name === "blog-credentials"),
    ).toBe(true);
  });

  it("keeps the last good Registry when the new one is malformed, and reports the error", async () => {
    writeRegistry(envtest, [shop]);
    const m = await start();
    await waitUntil(() => m.holder.current() ?? undefined);
    envtest.apply({
      namespace: REGISTRY_NS,
      name: REGISTRY_NAME,
      data: { "registry.json": '{"apiVersion":"replica-mirror/v2","apps":[]}' },
    });
    const s = await waitUntil(() =>
      m.holder.current()?.registry.error ? m.holder.current()! : undefined,
    );
    expect(s.registry.error).toBe('invalid registry: apiVersion: must be "replica-mirror/v1"');
    expect(listApps(s).map((a) => a.name)).toEqual(["shop"]);
    envtest.delete(REGISTRY_NS, REGISTRY_NAME);
    const empty = await waitUntil(() =>
      m.holder.current()?.registry.present === false ? m.holder.current()! : undefined,
    );
    expect(listApps(empty)).toEqual([]);
  });

  it("converges three mirrors independently, reading Secrets with get, list and watch only", async () => {
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "a" });
    writeRegistry(envtest, [shop, blog]);
    const mirrors = await Promise.all([start(), start(), start()]);
    writeSecret(envtest, "tenant-b", "blog-credentials", { token: "b" });
    for (const m of mirrors) {
      await waitUntil(() =>
        JSON.stringify(appState(m.holder, "blog")).includes('"value":"b"') ? true : undefined,
      );
    }
    const verbs = new Set(
      envtest.requests.entries().map((e) => `${e.method} ${e.verb} ${e.resource ?? "-"}`),
    );
    expect([...verbs].sort()).toEqual(
      ["GET get secrets", "GET list secrets", "GET watch secrets"].filter((v) => verbs.has(v)),
    );
    expect([...verbs].every((v) => v.startsWith("GET ") && v.endsWith(" secrets"))).toBe(true);
  });

  it("watches only the listed namespaces and honours a label selector", async () => {
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "a" }, { mirror: "yes" });
    writeSecret(envtest, "tenant-b", "blog-credentials", { token: "b" }, { mirror: "no" });
    writeRegistry(envtest, [shop, blog]);
    const m = await start({
      flags: ["--secret-namespaces", "tenant-a,tenant-b", "--secret-selector", "mirror=yes"],
    });
    await waitUntil(() => m.holder.current() ?? undefined);
    await waitUntil(() => (envtest.openWatches === 3 ? true : undefined));
    expect([appState(m.holder, "shop"), appState(m.holder, "blog")]).toEqual([
      { ready: true, value: "a", reason: null },
      { ready: false, value: null, reason: "secret-absent" },
    ]);
    const scopes = new Set(
      envtest.requests
        .entries()
        .filter((e) => e.verb === "watch")
        .map((e) => `${e.namespace ?? "*"} ${e.query.labelSelector ?? e.query.fieldSelector}`),
    );
    expect([...scopes].sort()).toEqual([
      "platform metadata.name=replica-registry",
      "tenant-a mirror=yes",
      "tenant-b mirror=yes",
    ]);
  });
});
