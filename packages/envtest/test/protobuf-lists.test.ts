import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { secret, secretList, unwrap, withDataBytes } from "./protobuf-decode.ts";
import { fetchBytes, manifest, PROTOBUF, PROTOBUF_FIRST } from "./protobuf-http.ts";

interface JsonList {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: { data?: Record<string, string> }[];
}

const BINARY = Uint8Array.from([0x00, 0x7f, 0x80, 0xc3, 0xff, 0xfe]);

let env: Envtest;

/** The same GET answered as protobuf and as JSON; the protobuf one checked for its headers. */
async function both(path: string) {
  const pb = await fetchBytes(env, "GET", path, PROTOBUF_FIRST);
  const json = await fetchBytes(env, "GET", path, "application/json");
  expect(pb.status).toBe(json.status);
  expect(pb.headers.get("content-type")).toBe(PROTOBUF);
  expect(Number(pb.headers.get("content-length"))).toBe(pb.body.length);
  return { pb: unwrap(pb.body), json: JSON.parse(json.body.toString("utf8")) as JsonList };
}

/** The JSON list in the shape secretList() decodes to: data as bytes, no kind or apiVersion. */
function jsonListShape(l: JsonList) {
  return { metadata: l.metadata, items: l.items.map(withDataBytes) };
}

const ENVELOPE = { apiVersion: "v1", contentEncoding: "", contentType: "" };

beforeAll(async () => {
  env = await startEnvtest();
  const post = async (ns: string, body: object, manager = "seed") => {
    const path = `/api/v1/namespaces/${ns}/secrets?fieldManager=${manager}`;
    const r = await fetchBytes(env, "POST", path, "application/json", body);
    if (r.status !== 201) throw new Error(r.body.toString());
  };
  await post("a", manifest("plain", { k: "v" }));
  await post(
    "a",
    manifest(
      "labelled",
      { bin: BINARY, empty: "", "z.last": "zz", "a-first": "aa" },
      {},
      {
        labels: { tier: "gold", app: "web" },
        annotations: { "example.com/note": "ü and 中文", "a.example.com/x": "" },
      },
    ),
  );
  await post(
    "a",
    manifest(
      "frozen",
      { username: "u", password: "p" },
      { immutable: true, type: "kubernetes.io/basic-auth" },
    ),
  );
  await post(
    "a",
    manifest(
      "owned",
      { k: "v" },
      { immutable: false },
      {
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "cm", uid: "u-1", controller: true },
          { apiVersion: "v1", kind: "Pod", name: "p", uid: "u-2", blockOwnerDeletion: false },
        ],
        finalizers: ["example.com/keep", "example.com/also"],
      },
    ),
  );
  await post("b", manifest("", { k: "v" }, {}, { generateName: "gen-" }));
  const patch = await fetchBytes(
    env,
    "PATCH",
    "/api/v1/namespaces/a/secrets/plain?fieldManager=other",
    "application/json",
    { data: { added: Buffer.from([0x80]).toString("base64") } },
  );
  expect(patch.status).toBe(200);
  for (let i = 0; i < 23; i++)
    env.apply({
      namespace: "c",
      name: `s-${String(i).padStart(2, "0")}`,
      data: { i: String(i), raw: BINARY },
    });
});
afterAll(async () => {
  await env?.close();
});

describe("protobuf lists and gets of Secrets", () => {
  it("lists in protobuf exactly what it lists in JSON, with an exact Content-Length", async () => {
    for (const path of [
      "/api/v1/secrets",
      "/api/v1/namespaces/a/secrets",
      "/api/v1/secrets?resourceVersion=0",
      "/api/v1/secrets?labelSelector=app%3Dweb",
      "/api/v1/namespaces/empty/secrets",
    ]) {
      const { pb, json } = await both(path);
      expect(pb.envelope, path).toEqual({ ...ENVELOPE, kind: "SecretList" });
      expect(secretList(pb.raw), path).toEqual(jsonListShape(json));
    }
    const all = await both("/api/v1/secrets");
    expect(all.json.items.length).toBe(28);
  });

  it("pages protobuf lists with limit and continue, each page equal to the JSON page", async () => {
    const seen: unknown[] = [];
    let token: string | undefined;
    const remaining: (number | undefined)[] = [];
    do {
      const q = `limit=6${token === undefined ? "" : `&continue=${encodeURIComponent(token)}`}`;
      const { pb, json } = await both(`/api/v1/secrets?${q}`);
      const page = secretList(pb.raw);
      expect(page).toEqual(jsonListShape(json));
      seen.push(...page.items);
      remaining.push(page.metadata.remainingItemCount);
      token = page.metadata.continue;
    } while (token !== undefined);
    expect(remaining).toEqual([22, 16, 10, 4, undefined]);
    const whole = await both("/api/v1/secrets");
    expect(seen).toEqual(jsonListShape(whole.json).items);
  });

  it("answers a GET of each Secret in protobuf as in JSON, less kind and apiVersion", async () => {
    const list = (await both("/api/v1/secrets")).json;
    for (const item of list.items as { metadata: { namespace: string; name: string } }[]) {
      const { namespace, name } = item.metadata;
      const { pb, json } = await both(`/api/v1/namespaces/${namespace}/secrets/${name}`);
      expect(pb.envelope).toEqual({ ...ENVELOPE, kind: "Secret" });
      const { kind, apiVersion, ...rest } = json as unknown as Record<string, unknown>;
      expect({ kind, apiVersion }).toEqual({ kind: "Secret", apiVersion: "v1" });
      expect(secret(pb.raw), name).toEqual(withDataBytes(rest));
    }
  });

  it("lists 2,000 Secrets in protobuf whole, decoded equal to the JSON list", async () => {
    const big = await startEnvtest();
    try {
      for (let i = 0; i < 2000; i++)
        big.apply({ namespace: "big", name: `s-${i}`, data: { v: BINARY, n: String(i) } });
      const pb = await fetchBytes(big, "GET", "/api/v1/secrets", PROTOBUF_FIRST);
      const json = await fetchBytes(big, "GET", "/api/v1/secrets", "application/json");
      expect(Number(pb.headers.get("content-length"))).toBe(pb.body.length);
      const decoded = secretList(unwrap(pb.body).raw);
      expect(decoded.items.length).toBe(2000);
      expect(decoded).toEqual(jsonListShape(JSON.parse(json.body.toString()) as JsonList));
      const logged = big.requests.entries().filter((e) => e.verb === "list");
      expect(logged.map((e) => [e.objects, e.bytes])).toEqual([
        [2000, pb.body.length],
        [2000, json.body.length],
      ]);
    } finally {
      await big.close();
    }
  });
});
