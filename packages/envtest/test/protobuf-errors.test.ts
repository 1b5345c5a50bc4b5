import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { openWatch } from "./helpers.ts";
import {
  secret,
  secretList,
  status,
  unwrap,
  watchFrames,
  withDataBytes,
} from "./protobuf-decode.ts";
import { fetchBytes, manifest, PROTOBUF, PROTOBUF_FIRST } from "./protobuf-http.ts";

let env: Envtest;
beforeEach(async () => {
  env = await startEnvtest();
});
afterEach(async () => {
  await env.close();
});

/** A protobuf Status answer as the JSON one reads: kind and apiVersion from the envelope. */
function statusJson(body: Buffer) {
  const { envelope, raw } = unwrap(body);
  expect(envelope).toEqual({
    apiVersion: "v1",
    kind: "Status",
    contentEncoding: "",
    contentType: "",
  });
  return { kind: "Status", apiVersion: "v1", ...status(raw) };
}

/**
 * The same failing request with Accept protobuf first and with Accept JSON: same code, same
 * Retry-After, same Status; `before` sets up each attempt (a fault is used up by one request).
 */
async function sameFailure(
  method: string,
  path: string,
  before: () => void = () => {},
  body?: object,
) {
  before();
  const pb = await fetchBytes(env, method, path, PROTOBUF_FIRST, body);
  before();
  const json = await fetchBytes(env, method, path, "application/json", body);
  expect(pb.headers.get("content-type")).toBe(PROTOBUF);
  expect(Number(pb.headers.get("content-length"))).toBe(pb.body.length);
  expect(pb.status).toBe(json.status);
  expect(pb.headers.get("retry-after")).toBe(json.headers.get("retry-after"));
  const expected = JSON.parse(json.body.toString("utf8")) as { code: number };
  expect(statusJson(pb.body)).toEqual(expected);
  return { code: pb.status, retryAfter: pb.headers.get("retry-after"), status: expected };
}

describe("protobuf Status errors", () => {
  it("410 Expired: a resourceVersion older than the history", async () => {
    env.apply({ namespace: "default", name: "a" });
    env.apply({ namespace: "default", name: "b" });
    env.faults.compact();
    const r = await sameFailure("GET", "/api/v1/secrets?resourceVersion=2&limit=1");
    expect(r.status).toMatchObject({ code: 410, reason: "Expired" });
  });

  it("429 with Retry-After and details.retryAfterSeconds from an injected fault", async () => {
    const r = await sameFailure("GET", "/api/v1/namespaces/default/secrets", () =>
      env.faults.failNext({ verb: "list", count: 1, status: 429, retryAfterSeconds: 3 }),
    );
    expect(r.retryAfter).toBe("3");
    expect(r.status).toMatchObject({ code: 429, details: { retryAfterSeconds: 3 } });
  });

  it("404 for a GET of a missing Secret", async () => {
    const r = await sameFailure("GET", "/api/v1/namespaces/default/secrets/missing");
    expect(r.status).toMatchObject({ code: 404, details: { name: "missing", kind: "secrets" } });
  });

  it("409, 422 with causes, 500 and 503 faults, 504 too-large resourceVersion", async () => {
    env.apply({ namespace: "default", name: "taken" });
    const codes = [
      await sameFailure("POST", "/api/v1/namespaces/default/secrets", () => {}, manifest("taken")),
      await sameFailure(
        "POST",
        "/api/v1/namespaces/default/secrets",
        () => {},
        manifest("Bad_Name"),
      ),
      await sameFailure("GET", "/api/v1/namespaces/default/secrets/taken", () =>
        env.faults.failNext({ verb: "get", count: 1, status: 500 }),
      ),
      await sameFailure("DELETE", "/api/v1/namespaces/default/secrets/taken", () =>
        env.faults.failNext({ verb: "delete", count: 1, status: 503, retryAfterSeconds: 2 }),
      ),
      await sameFailure("GET", "/api/v1/secrets?resourceVersion=999"),
    ].map((r) => r.code);
    expect(codes).toEqual([409, 422, 500, 503, 504]);
  });

  it("stays JSON where protobuf is not served: Namespaces, unknown paths", async () => {
    for (const path of ["/api/v1/namespaces/missing", "/api/v1/configmaps"]) {
      const r = await fetchBytes(env, "GET", path, PROTOBUF_FIRST);
      expect(r.headers.get("content-type"), path).toBe("application/json");
      expect(JSON.parse(r.body.toString())).toMatchObject({ kind: "Status" });
    }
  });
});

describe("protobuf answers to writes", () => {
  const base = "/api/v1/namespaces/default/secrets";

  it("answers create, update and patch with the Secret in protobuf, equal to a JSON GET of it", async () => {
    const steps = [
      {
        method: "POST",
        path: base,
        body: manifest("w", { k: Uint8Array.from([0x80]) }),
        code: 201,
      },
      {
        method: "PUT",
        path: `${base}/w`,
        body: manifest("w", { k: "v2" }, { immutable: false }),
        code: 200,
      },
      { method: "PATCH", path: `${base}/w`, body: { metadata: { labels: { a: "b" } } }, code: 200 },
    ];
    for (const s of steps) {
      const pb = await fetchBytes(env, s.method, s.path, PROTOBUF_FIRST, s.body);
      expect(pb.status, s.method).toBe(s.code);
      expect(pb.headers.get("content-type")).toBe(PROTOBUF);
      const { envelope, raw } = unwrap(pb.body);
      expect(envelope.kind).toBe("Secret");
      const get = await fetchBytes(env, "GET", `${base}/w`, "application/json");
      const { kind: _k, apiVersion: _a, ...json } = JSON.parse(get.body.toString());
      expect(secret(raw), s.method).toEqual(withDataBytes(json));
    }
  });

  it("answers a delete with the Success Status and a deletecollection with the list, in protobuf", async () => {
    env.apply({ namespace: "default", name: "x", data: { k: "v" } });
    env.apply({ namespace: "default", name: "y", data: { k: "v" } });
    const uid = env.get("default", "x")?.metadata.uid;
    const del = await fetchBytes(env, "DELETE", `${base}/x`, PROTOBUF_FIRST);
    expect(del.status).toBe(200);
    expect(statusJson(del.body)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { name: "x", kind: "secrets", uid },
    });
    const before = await fetchBytes(env, "GET", base, "application/json");
    const items = (JSON.parse(before.body.toString()) as { items: object[] }).items;
    const all = await fetchBytes(env, "DELETE", base, PROTOBUF_FIRST);
    const { envelope, raw } = unwrap(all.body);
    expect(envelope.kind).toBe("SecretList");
    expect(secretList(raw)).toEqual({
      metadata: { resourceVersion: String(env.state.resourceVersion) },
      items: items.map(withDataBytes),
    });
  });
});

describe("negotiation", () => {
  it("answers in the client's first acceptable media type, by quality then specificity", async () => {
    env.apply({ namespace: "default", name: "n" });
    const typeFor = async (accept: string) =>
      (await fetchBytes(env, "GET", "/api/v1/namespaces/default/secrets/n", accept)).headers.get(
        "content-type",
      );
    const cases: [string, string | null][] = [
      [PROTOBUF, PROTOBUF],
      [PROTOBUF_FIRST, PROTOBUF],
      [`application/json, ${PROTOBUF}`, "application/json"],
      [`${PROTOBUF};q=0.5, application/json`, "application/json"],
      [`*/*, ${PROTOBUF}`, PROTOBUF],
      ["*/*", "application/json"],
      ["application/*", "application/json"],
      [`application/json;as=Table;v=v1;g=meta.k8s.io, ${PROTOBUF}`, "application/json"],
      [`${PROTOBUF};as=Table;v=v1;g=meta.k8s.io, application/json`, "application/json"],
    ];
    const got: [string, string | null][] = [];
    for (const [accept] of cases) got.push([accept, await typeFor(accept)]);
    expect(got).toEqual(cases);
  });

  it("streams watches in protobuf frames when asked first, as kube-apiserver does", async () => {
    env.apply({ namespace: "default", name: "w", data: { k: "v" } });
    const query = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan";
    const res = await fetch(
      `${env.url}/api/v1/namespaces/default/secrets?${query}&allowWatchBookmarks=true`,
      { headers: { accept: PROTOBUF_FIRST } },
    );
    let body = Buffer.alloc(0);
    for await (const chunk of res.body ?? []) {
      body = Buffer.concat([body, chunk]);
      if (watchFrames(body).length === 2) break;
    }
    const [added, bookmark] = watchFrames(body);
    expect({
      contentType: res.headers.get("content-type"),
      added: { type: added?.type, kind: added?.envelope.kind, secret: secret(added!.raw) },
      bookmark: {
        type: bookmark?.type,
        kind: bookmark?.envelope.kind,
        metadata: secret(bookmark!.raw).metadata,
      },
    }).toEqual({
      contentType: "application/vnd.kubernetes.protobuf;stream=watch",
      added: {
        type: "ADDED",
        kind: "Secret",
        secret: expect.objectContaining({
          metadata: expect.objectContaining({ name: "w", namespace: "default" }),
          data: { k: Buffer.from("v") },
        }),
      },
      bookmark: {
        type: "BOOKMARK",
        kind: "Secret",
        metadata: expect.objectContaining({
          resourceVersion: expect.stringMatching(/^\d+$/),
          annotations: { "k8s.io/initial-events-end": "true" },
        }),
      },
    });
  });

  it("streams watches as JSON to a client that asks for JSON", async () => {
    env.apply({ namespace: "default", name: "w" });
    const w = await openWatch(env, "/api/v1/namespaces/default/secrets?watch=true", {
      accept: "application/json",
    });
    expect(w.headers["content-type"]).toBe("application/json");
    expect((await w.next()).object.metadata.name).toBe("w");
    w.close();
  });

  it("records protobuf answers' bytes and the request's content type in the request log", async () => {
    env.apply({ namespace: "default", name: "r" });
    const get = await fetchBytes(env, "GET", "/api/v1/namespaces/default/secrets/r", PROTOBUF);
    const post = await fetchBytes(
      env,
      "POST",
      "/api/v1/namespaces/default/secrets",
      PROTOBUF,
      manifest("p"),
    );
    const entries = env.requests.entries().map((e) => [e.verb, e.objects, e.bytes, e.contentType]);
    expect(entries).toEqual([
      ["get", 1, get.body.length, undefined],
      ["create", 1, post.body.length, "application/json"],
    ]);
  });
});
