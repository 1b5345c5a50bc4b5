import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { applyJsonPatch } from "../src/json-patch.ts";
import { mergePatch, strategicMergePatch } from "../src/patch.ts";
import { call, failureStatus } from "./helpers.ts";

function B64(s: string) {
  return Buffer.from(s).toString("base64");
}
const PATH = "/api/v1/namespaces/default/secrets/p";

describe("patch algorithms", () => {
  it("merge patch merges objects and deletes with null", () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: null, e: 3 }, d: [2] })).toEqual({
      a: { c: 2, e: 3 },
      d: [2],
    });
  });

  it("strategic merge honours $patch: replace and delete, $retainKeys, and strips $setElementOrder", () => {
    const target = {
      data: { a: "1", b: "2" },
      metadata: { labels: { x: "1", y: "2" }, finalizers: ["f1"] },
    };
    expect(
      strategicMergePatch(target, {
        data: { $patch: "replace", c: "3" },
        metadata: {
          labels: { $retainKeys: ["x"], z: "3" },
          finalizers: ["f2"],
          "$setElementOrder/finalizers": ["f1", "f2"],
        },
      }),
    ).toEqual({
      data: { c: "3" },
      metadata: { labels: { x: "1", z: "3" }, finalizers: ["f1", "f2"] },
    });
    expect(strategicMergePatch(target, { data: { $patch: "delete" } })).toEqual({
      metadata: target.metadata,
    });
    expect(
      strategicMergePatch(target, { metadata: { "$deleteFromPrimitiveList/finalizers": ["f1"] } }),
    ).toMatchObject({
      metadata: { finalizers: [] },
    });
  });

  it("JSON patch applies add, replace, remove, move, copy and test", () => {
    const r = applyJsonPatch({ a: { b: 1 }, l: [1, 2] }, [
      { op: "add", path: "/a/c", value: 2 },
      { op: "replace", path: "/a/b", value: 9 },
      { op: "remove", path: "/l/0" },
      { op: "copy", from: "/a/c", path: "/d" },
      { op: "move", from: "/d", path: "/e" },
      { op: "test", path: "/e", value: 2 },
      { op: "add", path: "/l/-", value: 3 },
    ]);
    expect(r).toEqual({ ok: true, value: { a: { b: 9, c: 2 }, l: [2, 3], e: 2 } });
    expect(applyJsonPatch({ a: 1 }, [{ op: "test", path: "/a", value: 2 }]).ok).toBe(false);
    expect(applyJsonPatch({}, { not: "a patch" })).toMatchObject({
      ok: false,
      failure: { status: { code: 400, reason: "BadRequest" } },
    });
  });
});

describe("PATCH over HTTP", () => {
  let env: Envtest;
  beforeEach(async () => {
    env = await startEnvtest();
    env.apply({
      namespace: "default",
      name: "p",
      data: { a: "1", b: "2" },
      labels: { keep: "yes" },
    });
  });
  afterEach(async () => {
    await env.close();
  });

  const patch = (type: string, body: unknown, query = "") =>
    call(env, "PATCH", `${PATH}${query}`, typeof body === "string" ? body : JSON.stringify(body), {
      "content-type": type,
    });

  it("applies a JSON merge patch, stringData included", async () => {
    const res = await patch("application/merge-patch+json", {
      data: { a: null },
      stringData: { c: "three" },
    });
    expect(res.status).toBe(200);
    expect((res.json as { data: unknown }).data).toEqual({ b: B64("2"), c: B64("three") });
  });

  it("applies a strategic merge patch as kubectl apply sends it", async () => {
    const res = await patch("application/strategic-merge-patch+json", {
      metadata: { annotations: { note: "x" }, labels: { $patch: "replace", fresh: "1" } },
      data: { b: B64("22") },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      metadata: { annotations: { note: "x" }, labels: { fresh: "1" } },
      data: { a: B64("1"), b: B64("22") },
    });
  });

  it("applies a JSON patch and answers 422 when a test operation fails", async () => {
    const ok = await patch("application/json-patch+json", [
      { op: "replace", path: "/data/a", value: B64("one") },
    ]);
    expect((ok.json as { data: { a: string } }).data.a).toBe(B64("one"));
    const failed = await patch("application/json-patch+json", [
      { op: "test", path: "/data/a", value: "nope" },
    ]);
    expect(failed.status).toBe(422);
  });

  it("answers 409 when the patch carries a stale resourceVersion, 404 when absent, 415 for other types", async () => {
    const stale = await patch("application/merge-patch+json", {
      metadata: { resourceVersion: "1" },
      data: { a: null },
    });
    expect(stale.status).toBe(409);
    const missing = await call(env, "PATCH", "/api/v1/namespaces/default/secrets/none", "{}", {
      "content-type": "application/merge-patch+json",
    });
    expect(missing.status).toBe(404);
    const unknown = await patch("text/plain", "{}");
    expect(unknown.status).toBe(415);
  });

  it("server-side apply creates, takes ownership, removes fields it no longer applies, and reports conflicts", async () => {
    const apply = (yaml: string, query: string) =>
      patch("application/apply-patch+yaml", yaml, query);
    const first = await call(
      env,
      "PATCH",
      "/api/v1/namespaces/default/secrets/ssa?fieldManager=alice",
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ssa\ndata:\n  x: eA==\n  y: eQ==\n",
      {
        "content-type": "application/apply-patch+yaml",
      },
    );
    expect(first.status).toBe(201);
    const second = await call(
      env,
      "PATCH",
      "/api/v1/namespaces/default/secrets/ssa?fieldManager=alice",
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ssa\ndata:\n  x: eA==\n",
      {
        "content-type": "application/apply-patch+yaml",
      },
    );
    expect((second.json as { data: unknown }).data).toEqual({ x: "eA==" });

    const conflict = await apply(
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: p\ndata:\n  a: Y2hhbmdlZA==\n",
      "?fieldManager=bob",
    );
    expect(conflict.status).toBe(409);
    const withEnvtest = 'conflict with "envtest" using v1';
    expect(conflict.json).toEqual(
      failureStatus(409, "Conflict", `Apply failed with 1 conflict: ${withEnvtest}: .data.a`, {
        causes: [{ reason: "FieldManagerConflict", message: withEnvtest, field: ".data.a" }],
      }),
    );
    const forced = await apply(
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: p\ndata:\n  a: Y2hhbmdlZA==\n",
      "?fieldManager=bob&force=true",
    );
    expect(forced.status).toBe(200);
    const managers = (
      forced.json as { metadata: { managedFields: { manager: string; operation: string }[] } }
    ).metadata.managedFields;
    expect(managers.map((m) => `${m.manager}/${m.operation}`)).toEqual([
      "envtest/Update",
      "bob/Apply",
    ]);
  });

  it("requires fieldManager for server-side apply", async () => {
    const res = await patch(
      "application/apply-patch+yaml",
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: p\n",
    );
    expect(res.status).toBe(400);
  });
});
