import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Envtest, startEnvtest } from "../src/index.ts";
import { decodeDeleteOptionsProto, decodeEnvelope, decodeSecretProto } from "../src/protobuf.ts";
import { call } from "./helpers.ts";
import { secret, unwrap } from "./protobuf-decode.ts";
import { encode, protobufSecret } from "./protobuf-encode.ts";

function B64(s: string) {
  return Buffer.from(s).toString("base64");
}

describe("protobuf decoder", () => {
  it("decodes the runtime.Unknown envelope and the Secret inside, skipping unknown fields of every wire type", () => {
    const body = protobufSecret({
      name: "pb",
      namespace: "default",
      labels: { app: "x" },
      data: { a: "1" },
      stringData: { b: "2" },
      type: "Opaque",
      immutable: true,
      extra: [
        { n: 40, varint: 300 },
        { n: 41, fixed64: true },
        { n: 42, fixed32: true },
        { n: 43, bytes: "ignored" },
      ],
    });
    const env = decodeEnvelope(body);
    expect(env.ok && { apiVersion: env.value.apiVersion, kind: env.value.kind }).toEqual({
      apiVersion: "v1",
      kind: "Secret",
    });
    if (!env.ok) return;
    expect(decodeSecretProto(env.value.raw)).toEqual({
      ok: true,
      value: {
        metadata: { name: "pb", namespace: "default", labels: { app: "x" } },
        data: { a: B64("1") },
        stringData: { b: "2" },
        type: "Opaque",
        immutable: true,
      },
    });
  });

  it("refuses bodies without the magic prefix and truncated messages", () => {
    expect(decodeEnvelope(Uint8Array.from([1, 2, 3, 4])).ok).toBe(false);
    const body = protobufSecret({ name: "cut", data: { a: "123456" } });
    const env = decodeEnvelope(body);
    if (!env.ok) throw new Error(env.failure.status.message);
    expect(decodeSecretProto(env.value.raw.subarray(0, env.value.raw.length - 3)).ok).toBe(false);
  });

  it("decodes DeleteOptions preconditions", () => {
    const raw = encode([
      {
        n: 2,
        bytes: [
          { n: 1, bytes: "uid-1" },
          { n: 2, bytes: "42" },
        ],
      },
      { n: 4, bytes: "Background" },
    ]);
    expect(decodeDeleteOptionsProto(raw)).toEqual({
      ok: true,
      value: {
        preconditions: { uid: "uid-1", resourceVersion: "42" },
        propagationPolicy: "Background",
      },
    });
  });
});

describe("protobuf create over HTTP", () => {
  let env: Envtest;
  beforeAll(async () => {
    env = await startEnvtest();
  });
  afterAll(async () => {
    await env.close();
  });

  it("creates a Secret from a protobuf body and answers in protobuf, as asked first", async () => {
    const res = await fetch(
      `${env.url}/api/v1/namespaces/default/secrets?fieldManager=kubectl-create`,
      {
        method: "POST",
        body: protobufSecret({ name: "pb", data: { a: "1" }, stringData: { b: "2" } }),
        headers: {
          "content-type": "application/vnd.kubernetes.protobuf",
          accept: "application/vnd.kubernetes.protobuf,application/json",
        },
      },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/vnd.kubernetes.protobuf");
    const { envelope, raw } = unwrap(new Uint8Array(await res.arrayBuffer()));
    expect(envelope.kind).toBe("Secret");
    expect(secret(raw)).toMatchObject({
      metadata: { name: "pb", namespace: "default" },
      data: { a: Buffer.from("1"), b: Buffer.from("2") },
      type: "Opaque",
    });
  });

  it("creates a Secret from a protobuf body and answers JSON to a client that asks for JSON", async () => {
    const res = await call(
      env,
      "POST",
      "/api/v1/namespaces/default/secrets",
      protobufSecret({ name: "pb-json", data: { a: "1" } }),
      { "content-type": "application/vnd.kubernetes.protobuf", accept: "application/json" },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.json).toMatchObject({
      metadata: { name: "pb-json", namespace: "default" },
      data: { a: B64("1") },
      type: "Opaque",
    });
  });

  it("answers 400 for a protobuf body that does not decode", async () => {
    const res = await call(
      env,
      "POST",
      "/api/v1/namespaces/default/secrets",
      Uint8Array.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x50]),
      {
        "content-type": "application/vnd.kubernetes.protobuf",
      },
    );
    expect(res.status).toBe(400);
  });
});
