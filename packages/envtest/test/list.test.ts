import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { parseFieldSelector, parseLabelSelector } from "../src/selectors.ts";
import { badRequest } from "../src/status.ts";
import { call } from "./helpers.ts";

interface List {
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: { kind?: string; metadata: { name: string; namespace: string } }[];
}
function names(l: List) {
  return l.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`);
}

describe("selectors", () => {
  const match = (sel: string, labels: Record<string, string>) => {
    const p = parseLabelSelector(sel);
    if (!p.ok) throw new Error(p.failure.status.message);
    return p.value(labels);
  };

  it("implements equality, set-based, existence and numeric label requirements", () => {
    const l = { app: "web", tier: "gold", n: "5" };
    expect(match("app=web", l)).toBe(true);
    expect(match("app==web,tier!=silver", l)).toBe(true);
    expect(match("app in (web, api)", l)).toBe(true);
    expect(match("app notin (web)", l)).toBe(false);
    expect(match("missing notin (x)", l)).toBe(true);
    expect(match("tier", l)).toBe(true);
    expect(match("!tier", l)).toBe(false);
    expect(match("!missing", l)).toBe(true);
    expect(match("n>4,n<6", l)).toBe(true);
    expect(match("", l)).toBe(true);
  });

  it("refuses malformed label selectors", () => {
    for (const bad of ["app in web", "app=(", "=x", "a b", "app in ()"]) {
      expect(parseLabelSelector(bad).ok, bad).toBe(false);
    }
  });

  it("accepts only the Secret field labels", () => {
    expect(parseFieldSelector("metadata.name=a,type!=Opaque").ok).toBe(true);
    expect(parseFieldSelector("spec.foo=bar")).toEqual({
      ok: false,
      failure: badRequest("field label not supported: spec.foo"),
    });
    expect(parseFieldSelector("garbage")).toMatchObject({ ok: false });
  });
});

describe("list", () => {
  let env: Envtest;
  beforeEach(async () => {
    env = await startEnvtest();
    for (const [ns, name, team] of [
      ["a", "s1", "x"],
      ["a", "s2", "y"],
      ["b", "s1", "x"],
      ["b", "s3", "y"],
      ["c", "s4", "x"],
    ] as const) {
      env.apply({
        namespace: ns,
        name,
        labels: { team },
        type: team === "x" ? "Opaque" : "example.com/y",
      });
    }
  });
  afterEach(async () => {
    await env.close();
  });

  const list = async (path: string) => (await call(env, "GET", path)).json as List;

  it("lists across namespaces in key order, items without kind, with the current resourceVersion", async () => {
    const l = await list("/api/v1/secrets");
    expect(l.kind).toBe("SecretList");
    expect(names(l)).toEqual(["a/s1", "a/s2", "b/s1", "b/s3", "c/s4"]);
    expect(l.items[0]).not.toHaveProperty("kind");
    expect(l.metadata.resourceVersion).toBe(String(env.state.resourceVersion));
    expect(names(await list("/api/v1/namespaces/b/secrets"))).toEqual(["b/s1", "b/s3"]);
  });

  it("writes each item from its stored object's bytes, serialised once, under one Content-Length", async () => {
    const res = await call(env, "GET", "/api/v1/secrets");
    expect(Number(res.headers.get("content-length"))).toBe(Buffer.byteLength(res.text));
    const stored = env.state.sortedKeys().map((k) => env.state.get(k)!);
    expect((res.json as List).items).toEqual(
      stored.map((s) => {
        const { kind: _k, apiVersion: _a, ...item } = s.obj;
        return item;
      }),
    );
    const first = stored.map((s) => s.item);
    await call(env, "GET", "/api/v1/secrets?resourceVersion=0");
    expect(stored.map((s) => s.item).every((b, i) => b === first[i])).toBe(true);
  });

  it("filters by label and field selectors", async () => {
    expect(names(await list("/api/v1/secrets?labelSelector=team%3Dx"))).toEqual([
      "a/s1",
      "b/s1",
      "c/s4",
    ]);
    expect(names(await list("/api/v1/secrets?labelSelector=team%20in%20(y)"))).toEqual([
      "a/s2",
      "b/s3",
    ]);
    expect(names(await list("/api/v1/secrets?fieldSelector=metadata.name%3Ds1"))).toEqual([
      "a/s1",
      "b/s1",
    ]);
    expect(
      names(await list("/api/v1/secrets?fieldSelector=metadata.namespace!%3Da,type%3DOpaque")),
    ).toEqual(["b/s1", "c/s4"]);
  });

  it("answers 400 BadRequest for an unsupported field selector", async () => {
    const res = await call(env, "GET", "/api/v1/secrets?fieldSelector=spec.x%3Dy");
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "field label not supported: spec.x",
      reason: "BadRequest",
      code: 400,
    });
  });

  it("pages with limit/continue at one resourceVersion: writes between pages do not show up", async () => {
    const p1 = await list("/api/v1/secrets?limit=2");
    expect(names(p1)).toEqual(["a/s1", "a/s2"]);
    expect(p1.metadata.remainingItemCount).toBe(3);
    env.apply({ namespace: "b", name: "s2", data: { new: "yes" } });
    env.delete("c", "s4");
    env.apply({ namespace: "b", name: "s1", data: { changed: "yes" } });
    const p2 = await list(`/api/v1/secrets?limit=2&continue=${p1.metadata.continue}`);
    expect(names(p2)).toEqual(["b/s1", "b/s3"]);
    expect(p2.metadata.resourceVersion).toBe(p1.metadata.resourceVersion);
    expect((p2.items[0] as unknown as { data?: unknown }).data).toBeUndefined();
    const p3 = await list(`/api/v1/secrets?limit=2&continue=${p2.metadata.continue}`);
    expect(names(p3)).toEqual(["c/s4"]);
    expect(p3.metadata.continue).toBeUndefined();
    expect(names(await list("/api/v1/secrets"))).toEqual(["a/s1", "a/s2", "b/s1", "b/s2", "b/s3"]);
  });

  it("pages through a selected list without reporting remainingItemCount", async () => {
    const p1 = await list("/api/v1/secrets?limit=1&labelSelector=team%3Dx");
    expect(names(p1)).toEqual(["a/s1"]);
    expect(p1.metadata.remainingItemCount).toBeUndefined();
    const p2 = await list(
      `/api/v1/secrets?limit=5&labelSelector=team%3Dx&continue=${p1.metadata.continue}`,
    );
    expect(names(p2)).toEqual(["b/s1", "c/s4"]);
  });

  it("answers 410 Expired for a continue token older than the retained history", async () => {
    const p1 = await list("/api/v1/secrets?limit=2");
    env.apply({ namespace: "a", name: "s1", data: { k: "v" } });
    env.faults.compact();
    const res = await call(env, "GET", `/api/v1/secrets?limit=2&continue=${p1.metadata.continue}`);
    expect(res.status).toBe(410);
    expect(res.json).toMatchObject({ kind: "Status", reason: "Expired", code: 410 });
  });

  it("serves resourceVersionMatch=Exact from history, and 504 for a future resourceVersion", async () => {
    const before = String(env.state.resourceVersion);
    env.delete("a", "s1");
    const exact = await list(
      `/api/v1/secrets?resourceVersion=${before}&resourceVersionMatch=Exact`,
    );
    expect(names(exact)).toContain("a/s1");
    expect(exact.metadata.resourceVersion).toBe(before);
    const future = await call(env, "GET", "/api/v1/secrets?resourceVersion=999999");
    expect(future.status).toBe(504);
  });

  it("answers a meta.k8s.io Table when kubectl asks for one", async () => {
    const res = await call(env, "GET", "/api/v1/namespaces/a/secrets", undefined, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    });
    const t = res.json as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[] }[];
    };
    expect(t.kind).toBe("Table");
    expect(t.columnDefinitions.map((c) => c.name)).toEqual(["Name", "Type", "Data", "Age"]);
    expect(t.rows.map((r) => r.cells.slice(0, 3))).toEqual([
      ["s1", "Opaque", 0],
      ["s2", "example.com/y", 0],
    ]);
  });
});
