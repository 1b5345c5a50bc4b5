import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  type V1Secret,
  Watch,
} from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { SETTLE } from "./helpers.ts";

let env: Envtest;
let kc: KubeConfig;
let api: CoreV1Api;
beforeEach(async () => {
  env = await startEnvtest({ bookmarkIntervalMs: 100 });
  kc = new KubeConfig();
  kc.loadFromString(env.kubeconfig());
  api = kc.makeApiClient(CoreV1Api);
});
afterEach(async () => {
  await env.close();
});

function secret(name: string, value: string, resourceVersion?: string): V1Secret {
  return {
    metadata: { name, ...(resourceVersion ? { resourceVersion } : {}) },
    stringData: { value },
  };
}

describe("@kubernetes/client-node against envtest", () => {
  it("creates, reads, lists, conflicts on a stale update, and deletes through CoreV1Api", async () => {
    const created = await api.createNamespacedSecret({
      namespace: "default",
      body: secret("c", "1"),
    });
    expect(created.type).toBe("Opaque");
    const read = await api.readNamespacedSecret({ namespace: "default", name: "c" });
    expect(Buffer.from(read.data?.value ?? "", "base64").toString()).toBe("1");
    const list = await api.listNamespacedSecret({ namespace: "default" });
    expect(list.items.map((s) => s.metadata?.name)).toEqual(["c"]);
    const rv = created.metadata?.resourceVersion;
    await api.replaceNamespacedSecret({
      namespace: "default",
      name: "c",
      body: secret("c", "2", rv),
    });
    const stale = await api
      .replaceNamespacedSecret({ namespace: "default", name: "c", body: secret("c", "3", rv) })
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ApiException);
    expect((stale as ApiException<unknown>).code).toBe(409);
    await api.deleteNamespacedSecret({ namespace: "default", name: "c" });
    const gone = await api
      .readNamespacedSecret({ namespace: "default", name: "c" })
      .catch((e: unknown) => e);
    expect((gone as ApiException<unknown>).code).toBe(404);
  });

  it("streams events and bookmarks to Watch", async () => {
    const seen: string[] = [];
    const done: unknown[] = [];
    const rv = String(env.state.resourceVersion);
    const controller = await new Watch(kc).watch(
      "/api/v1/namespaces/default/secrets",
      { allowWatchBookmarks: true, resourceVersion: rv },
      (type, obj: V1Secret) =>
        seen.push(`${type} ${obj.metadata?.name ?? obj.metadata?.resourceVersion}`),
      (e) => done.push(e),
    );
    env.apply({ namespace: "default", name: "w", data: { v: "1" } });
    env.apply({ namespace: "default", name: "w", data: { v: "2" } });
    env.delete("default", "w");
    await vi.waitFor(() => {
      expect(seen).toContain("DELETED w");
      expect(seen).toContainEqual(expect.stringMatching(/^BOOKMARK/));
    }, SETTLE);
    expect(seen.filter((s) => !s.startsWith("BOOKMARK"))).toEqual([
      "ADDED w",
      "MODIFIED w",
      "DELETED w",
    ]);
    controller.abort();
  });

  it("feeds an informer that lists, watches, and relists after a 410", async () => {
    env.apply({ namespace: "default", name: "a", data: { v: "1" } });
    env.apply({ namespace: "default", name: "b", data: { v: "1" } });
    const path = "/api/v1/namespaces/default/secrets";
    const informer = makeInformer(kc, path, () =>
      api.listNamespacedSecret({ namespace: "default" }),
    );
    const log: string[] = [];
    informer.on("add", (s) => log.push(`add ${s.metadata?.name}`));
    informer.on("update", (s) => log.push(`update ${s.metadata?.name}`));
    informer.on("delete", (s) => log.push(`delete ${s.metadata?.name}`));
    // client-node stops on any watch error except 410; restarting is the caller's job.
    informer.on("error", () => setTimeout(() => void informer.start(), 20));
    await informer.start();
    const names = () =>
      informer
        .list()
        .map((s) => s.metadata?.name)
        .sort();
    await vi.waitFor(() => expect(env.openWatches).toBe(1), SETTLE);
    expect(names()).toEqual(["a", "b"]);
    env.apply({ namespace: "default", name: "a", data: { v: "2" } });
    await vi.waitFor(() => expect(log).toContain("update a"), SETTLE);

    env.faults.stall(true);
    env.delete("default", "b");
    env.apply({ namespace: "default", name: "c", data: { v: "1" } });
    env.faults.compact();
    env.faults.dropWatches();
    env.faults.stall(false);

    await vi.waitFor(() => expect(names()).toEqual(["a", "c"]), { ...SETTLE, timeout: 10_000 });
    expect(log).toContain("delete b");
    expect(log).toContain("add c");
    const updatedRv = env.get("default", "a")?.metadata.resourceVersion;
    await vi.waitFor(() => expect(env.openWatches).toBe(1), SETTLE);
    expect(env.requests.entries().map((e) => [e.verb, e.query.resourceVersion ?? ""])).toEqual([
      ["list", ""],
      ["watch", String(Number(updatedRv) - 1)],
      ["watch", updatedRv],
      ["list", ""],
      ["watch", String(env.state.resourceVersion)],
    ]);
    await informer.stop();
  });
});
