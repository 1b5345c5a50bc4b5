import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { call } from "./helpers.ts";

interface List {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: { metadata: { name: string } }[];
}

let env: Envtest;
beforeEach(async () => {
  env = await startEnvtest();
  for (let i = 0; i < 5; i++) env.apply({ namespace: "default", name: `s${i}`, data: { v: "x" } });
});
afterEach(async () => {
  await env.close();
});

async function list(query: string): Promise<List> {
  const res = await call(env, "GET", `/api/v1/namespaces/default/secrets?${query}`);
  expect(res.status).toBe(200);
  return res.json as List;
}
const names = (l: List) => l.items.map((i) => i.metadata.name);
const reads = () => env.requests.entries().map((e) => e.listRead);

describe("resourceVersion=0: the watch cache", () => {
  it("answers the whole current state in one page whatever the limit, with its resourceVersion", async () => {
    const l = await list("resourceVersion=0&limit=2");
    expect(l).toEqual({
      kind: "SecretList",
      apiVersion: "v1",
      metadata: { resourceVersion: String(env.state.resourceVersion) },
      items: expect.any(Array),
    });
    expect(names(l)).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    env.delete("default", "s0");
    const after = await list("resourceVersion=0&limit=2&resourceVersionMatch=NotOlderThan");
    expect([names(after), after.metadata.resourceVersion]).toEqual([
      ["s1", "s2", "s3", "s4"],
      String(env.state.resourceVersion),
    ]);
    expect(reads()).toEqual(["cache", "cache"]);
  });

  it("is what client-node's list with resourceVersion '0' and a limit gets", async () => {
    const kc = new KubeConfig();
    kc.loadFromString(env.kubeconfig());
    const got = await kc.makeApiClient(CoreV1Api).listNamespacedSecret({
      namespace: "default",
      resourceVersion: "0",
      limit: 1,
    });
    expect(got.items.map((s) => s.metadata?.name)).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    expect(got.metadata?._continue).toBeUndefined();
  });
});

describe("lists without resourceVersion: consistent and paged", () => {
  it("pages with limit and continue, the continuation read at the first page's version", async () => {
    const p1 = await list("limit=2");
    expect([names(p1), p1.metadata.remainingItemCount]).toEqual([["s0", "s1"], 3]);
    env.apply({ namespace: "default", name: "s9" });
    const p2 = await list(`limit=10&continue=${p1.metadata.continue}`);
    expect([names(p2), p2.metadata.resourceVersion]).toEqual([
      ["s2", "s3", "s4"],
      p1.metadata.resourceVersion,
    ]);
    expect(reads()).toEqual(["consistent", "exact"]);
  });

  it("tells exact reads at a past version from not-older-than reads of the cache", async () => {
    const rv = String(env.state.resourceVersion);
    env.delete("default", "s4");
    expect(names(await list(`resourceVersion=${rv}&resourceVersionMatch=Exact`))).toContain("s4");
    expect(names(await list(`resourceVersion=${rv}`))).not.toContain("s4");
    expect(names(await list(`resourceVersion=${rv}&limit=10`))).toContain("s4");
    expect(reads()).toEqual(["exact", "cache", "exact"]);
  });
});
