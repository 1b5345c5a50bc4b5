import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { call, secretBody } from "./helpers.ts";

let env: Envtest;
beforeEach(async () => {
  env = await startEnvtest();
});
afterEach(async () => {
  await env.close();
});

function B64(s: string) {
  return Buffer.from(s).toString("base64");
}
const SECRETS = "/api/v1/namespaces/default/secrets";

describe("create and get", () => {
  it("creates a Secret with 201, defaults type to Opaque and fills uid, creationTimestamp and resourceVersion", async () => {
    const created = await call(env, "POST", SECRETS, secretBody("db", { password: "hunter2" }));
    expect(created.status).toBe(201);
    const obj = created.json as { metadata: Record<string, unknown> };
    expect(obj).toMatchObject({
      kind: "Secret",
      apiVersion: "v1",
      metadata: { name: "db", namespace: "default" },
      data: { password: B64("hunter2") },
      type: "Opaque",
    });
    expect(obj.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(obj.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const got = await call(env, "GET", `${SECRETS}/db`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(created.json);
  });

  it("merges stringData into data as base64 and never returns stringData", async () => {
    const body = {
      ...secretBody("mixed", { a: "from-data", b: "kept" }),
      stringData: { a: "from-string", c: "new" },
    };
    const created = await call(env, "POST", SECRETS, body);
    expect(created.status).toBe(201);
    const obj = created.json as Record<string, unknown>;
    expect(obj.data).toEqual({ a: B64("from-string"), b: B64("kept"), c: B64("new") });
    expect(obj).not.toHaveProperty("stringData");
    expect((await call(env, "GET", `${SECRETS}/mixed`)).json).not.toHaveProperty("stringData");
  });

  it("answers 404 NotFound Status shaped as the real server's", async () => {
    const res = await call(env, "GET", `${SECRETS}/missing`);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'secrets "missing" not found',
      reason: "NotFound",
      details: { name: "missing", kind: "secrets" },
      code: 404,
    });
  });

  it("answers 409 AlreadyExists on a second create", async () => {
    await call(env, "POST", SECRETS, secretBody("dup"));
    const res = await call(env, "POST", SECRETS, secretBody("dup"));
    expect(res.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'secrets "dup" already exists',
      reason: "AlreadyExists",
      details: { name: "dup", kind: "secrets" },
      code: 409,
    });
  });

  it("generates a name from generateName", async () => {
    const res = await call(env, "POST", SECRETS, { metadata: { generateName: "gen-" }, data: {} });
    expect(res.status).toBe(201);
    expect((res.json as { metadata: { name: string } }).metadata.name).toMatch(
      /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/,
    );
  });

  it("stores nothing on dryRun=All", async () => {
    const res = await call(env, "POST", `${SECRETS}?dryRun=All`, secretBody("dry"));
    expect(res.status).toBe(201);
    expect((await call(env, "GET", `${SECRETS}/dry`)).status).toBe(404);
  });

  it("refuses unknown fields with fieldValidation=Strict and warns by default", async () => {
    const body = { ...secretBody("strict"), spec: {} };
    const strict = await call(env, "POST", `${SECRETS}?fieldValidation=Strict`, body);
    expect(strict.status).toBe(400);
    expect((strict.json as { message: string }).message).toBe(
      'strict decoding error: unknown field "spec"',
    );
    const warn = await call(env, "POST", SECRETS, body);
    expect(warn.status).toBe(201);
    expect(warn.headers.get("warning")).toBe('299 - "unknown field \\"spec\\""');
  });

  it("rejects data that is not base64 with 400", async () => {
    const res = await call(env, "POST", SECRETS, {
      metadata: { name: "b64" },
      data: { k: "not base64!" },
    });
    expect(res.status).toBe(400);
    expect((res.json as { message: string }).message).toMatch(
      /^Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte \d+$/,
    );
  });
});

describe("update", () => {
  it("refuses a stale resourceVersion with 409 Conflict and accepts the current one", async () => {
    const created = (await call(env, "POST", SECRETS, secretBody("cfg", { k: "1" }))).json as {
      metadata: { resourceVersion: string };
    };
    const rv = created.metadata.resourceVersion;
    const first = await call(
      env,
      "PUT",
      `${SECRETS}/cfg`,
      secretBody("cfg", { k: "2" }, { resourceVersion: rv }),
    );
    expect(first.status).toBe(200);
    const stale = await call(
      env,
      "PUT",
      `${SECRETS}/cfg`,
      secretBody("cfg", { k: "3" }, { resourceVersion: rv }),
    );
    expect(stale.status).toBe(409);
    expect(stale.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'Operation cannot be fulfilled on secrets "cfg": the object has been modified; please apply your changes to the latest version and try again',
      reason: "Conflict",
      details: { name: "cfg", kind: "secrets" },
      code: 409,
    });
  });

  it("does not bump resourceVersion for an update that changes nothing", async () => {
    const created = (await call(env, "POST", SECRETS, secretBody("same", { k: "v" }))).json as {
      metadata: { resourceVersion: string };
    };
    const again = (await call(env, "PUT", `${SECRETS}/same`, secretBody("same", { k: "v" })))
      .json as { metadata: { resourceVersion: string } };
    expect(again.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it("keeps one global resourceVersion counter across namespaces", async () => {
    const a = env.apply({ namespace: "ns-a", name: "x", data: { k: "1" } });
    const b = env.apply({ namespace: "ns-b", name: "x", data: { k: "1" } });
    expect(Number(b.metadata.resourceVersion)).toBe(Number(a.metadata.resourceVersion) + 1);
  });

  it("applies direct writes with UTF-8 strings and raw bytes, and throws on invalid ones", () => {
    const s = env.apply({
      namespace: "default",
      name: "direct",
      data: { text: "héllo", raw: Uint8Array.from([0, 255]) },
    });
    expect(s.data).toEqual({ text: Buffer.from("héllo").toString("base64"), raw: "AP8=" });
    expect(env.apply({ namespace: "default", name: "direct", labels: { a: "b" } }).data).toEqual(
      s.data,
    );
    expect(() => env.apply({ namespace: "default", name: "Not Valid" })).toThrow(
      /Secret "Not Valid" is invalid/,
    );
    expect(env.delete("default", "direct")).toBe(true);
    expect(env.delete("default", "direct")).toBe(false);
  });

  it("answers 400 when the body's name differs from the URL's", async () => {
    await call(env, "POST", SECRETS, secretBody("one"));
    const res = await call(env, "PUT", `${SECRETS}/one`, secretBody("two"));
    expect(res.status).toBe(400);
    expect((res.json as { message: string }).message).toBe(
      "the name of the object (two) does not match the name on the URL (one)",
    );
  });

  it("refuses changes to an immutable Secret's data and to type", async () => {
    await call(env, "POST", SECRETS, { ...secretBody("frozen", { k: "1" }), immutable: true });
    const res = await call(env, "PUT", `${SECRETS}/frozen`, {
      ...secretBody("frozen", { k: "2" }),
      immutable: true,
    });
    expect(res.status).toBe(422);
    expect((res.json as { message: string }).message).toBe(
      'Secret "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    );
    await call(env, "POST", SECRETS, secretBody("typed"));
    const retype = await call(
      env,
      "PUT",
      `${SECRETS}/typed`,
      secretBody("typed", {}, { type: "example.com/other" }),
    );
    expect((retype.json as { message: string }).message).toBe(
      'Secret "typed" is invalid: type: Invalid value: "example.com/other": field is immutable',
    );
  });
});

describe("delete", () => {
  it("answers the Success Status with the uid, then 404", async () => {
    const created = (await call(env, "POST", SECRETS, secretBody("gone"))).json as {
      metadata: { uid: string };
    };
    const res = await call(env, "DELETE", `${SECRETS}/gone`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { name: "gone", kind: "secrets", uid: created.metadata.uid },
    });
    expect((await call(env, "DELETE", `${SECRETS}/gone`)).status).toBe(404);
  });

  it("honours a resourceVersion precondition", async () => {
    env.apply({ namespace: "default", name: "pre", data: { k: "1" } });
    const res = await call(env, "DELETE", `${SECRETS}/pre`, {
      preconditions: { resourceVersion: "1" },
    });
    expect(res.status).toBe(409);
    expect((res.json as { message: string }).message).toMatch(
      /the ResourceVersion in the precondition \(1\) does not match/,
    );
  });

  it("deletes a collection by label selector", async () => {
    env.apply({ namespace: "default", name: "a", labels: { team: "x" } });
    env.apply({ namespace: "default", name: "b", labels: { team: "y" } });
    const res = await call(env, "DELETE", `${SECRETS}?labelSelector=team%3Dx`);
    expect(res.status).toBe(200);
    expect(
      (res.json as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name),
    ).toEqual(["a"]);
    expect(env.get("default", "a")).toBeUndefined();
    expect(env.get("default", "b")).toBeDefined();
  });
});

describe("namespaces and discovery", () => {
  it("serves implicit namespaces: the system ones plus any a Secret uses", async () => {
    env.apply({ namespace: "tenant-a", name: "s" });
    const list = (await call(env, "GET", "/api/v1/namespaces")).json as {
      kind: string;
      items: { metadata: { name: string } }[];
    };
    expect(list.kind).toBe("NamespaceList");
    expect(list.items.map((n) => n.metadata.name)).toEqual([
      "default",
      "kube-node-lease",
      "kube-public",
      "kube-system",
      "tenant-a",
    ]);
    const ns = await call(env, "GET", "/api/v1/namespaces/tenant-a");
    expect(ns.json).toMatchObject({
      kind: "Namespace",
      apiVersion: "v1",
      metadata: { name: "tenant-a" },
      status: { phase: "Active" },
    });
    expect((await call(env, "GET", "/api/v1/namespaces/nope")).status).toBe(404);
  });

  it("answers /version, /api, /apis, /api/v1 and the health checks", async () => {
    expect((await call(env, "GET", "/version")).json).toMatchObject({ major: "1", minor: "32" });
    expect((await call(env, "GET", "/api")).json).toMatchObject({
      kind: "APIVersions",
      versions: ["v1"],
    });
    expect((await call(env, "GET", "/apis")).json).toEqual({
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: [],
    });
    const resources = (await call(env, "GET", "/api/v1")).json as { resources: { name: string }[] };
    expect(resources.resources.map((r) => r.name)).toEqual(["namespaces", "secrets"]);
    for (const p of ["/healthz", "/readyz", "/livez"])
      expect((await call(env, "GET", p)).text).toBe("ok");
    expect((await call(env, "GET", "/api/v1/configmaps")).status).toBe(404);
  });
});
