/**
 * The protobuf messages byte for byte, pinned to the layout of kube-apiserver's gogo-generated
 * marshallers (k8s.io/api and apimachinery generated.pb.go): what a decoder that tolerates
 * omissions (client-go's, the tests' own) would not notice.
 */
import { describe, expect, it } from "vitest";
import { encodeStatus, secretListProtoParts } from "../src/protobuf-encode.ts";
import { ProtoWriter } from "../src/protobuf-writer.ts";
import { buildSecret, StoredSecret } from "../src/secret.ts";
import { injected } from "../src/status.ts";
import { encode } from "./protobuf-encode.ts";

describe("messages as Go's gogo marshallers write them", () => {
  it("is written as Go's marshaller writes it: empty strings and zero ints included, unset pointers and empty maps left out", () => {
    const s = new StoredSecret(
      buildSecret({
        name: "n",
        namespace: "ns",
        uid: "u",
        resourceVersion: "7",
        creationTimestamp: "2024-05-06T07:08:09Z",
        labels: { b: "2", a: "1" },
        data: { y: Buffer.from([0x80]).toString("base64"), x: "" },
        managedFields: [
          {
            manager: "m",
            operation: "Update",
            apiVersion: "v1",
            time: "2024-05-06T07:08:09Z",
            fieldsType: "FieldsV1",
            fieldsV1: { "f:data": { ".": {}, "f:x": {} } },
          },
        ],
      }),
    );
    const seconds = Date.UTC(2024, 4, 6, 7, 8, 9) / 1000;
    const time = [
      { n: 1, varint: seconds },
      { n: 2, varint: 0 },
    ];
    const entry = (n: number, k: string, v: string | Uint8Array) => ({
      n,
      bytes: [
        { n: 1, bytes: k },
        { n: 2, bytes: v },
      ],
    });
    const expected = encode([
      {
        n: 1,
        bytes: [
          { n: 1, bytes: "n" },
          { n: 2, bytes: "" },
          { n: 3, bytes: "ns" },
          { n: 4, bytes: "" },
          { n: 5, bytes: "u" },
          { n: 6, bytes: "7" },
          { n: 7, varint: 0 },
          { n: 8, bytes: time },
          entry(11, "a", "1"),
          entry(11, "b", "2"),
          {
            n: 17,
            bytes: [
              { n: 1, bytes: "m" },
              { n: 2, bytes: "Update" },
              { n: 3, bytes: "v1" },
              { n: 4, bytes: time },
              { n: 6, bytes: "FieldsV1" },
              { n: 7, bytes: [{ n: 1, bytes: '{"f:data":{".":{},"f:x":{}}}' }] },
              { n: 8, bytes: "" },
            ],
          },
        ],
      },
      entry(2, "x", new Uint8Array()),
      entry(2, "y", Uint8Array.from([0x80])),
      { n: 3, bytes: "Opaque" },
    ]);
    expect(s.proto.toString("hex")).toBe(Buffer.from(expected).toString("hex"));
    expect(s.proto).toBe(s.proto);
  });

  it("writes a Status with its empty ListMeta, every details field, and the code", () => {
    const expected = encode([
      {
        n: 1,
        bytes: [
          { n: 1, bytes: "" },
          { n: 2, bytes: "" },
          { n: 3, bytes: "" },
        ],
      },
      { n: 2, bytes: "Failure" },
      { n: 3, bytes: "Too many requests, please try again later." },
      { n: 4, bytes: "TooManyRequests" },
      {
        n: 5,
        bytes: [
          { n: 1, bytes: "" },
          { n: 2, bytes: "" },
          { n: 3, bytes: "" },
          { n: 5, varint: 3 },
          { n: 6, bytes: "" },
        ],
      },
      { n: 6, varint: 429 },
    ]);
    expect(encodeStatus(injected(429, 3).status).toString("hex")).toBe(
      Buffer.from(expected).toString("hex"),
    );
  });

  it("frames a SecretList in the envelope: TypeMeta, raw (ListMeta, items), empty encodings", () => {
    const item = Buffer.from("item-bytes");
    const body = Buffer.concat(
      secretListProtoParts({ rv: 5, continueToken: "t", remainingItemCount: 0 }, [item, item]),
    );
    const raw = encode([
      {
        n: 1,
        bytes: [
          { n: 1, bytes: "" },
          { n: 2, bytes: "5" },
          { n: 3, bytes: "t" },
          { n: 4, varint: 0 },
        ],
      },
      { n: 2, bytes: item },
      { n: 2, bytes: item },
    ]);
    const expected = encode([
      {
        n: 1,
        bytes: [
          { n: 1, bytes: "v1" },
          { n: 2, bytes: "SecretList" },
        ],
      },
      { n: 2, bytes: raw },
      { n: 3, bytes: "" },
      { n: 4, bytes: "" },
    ]);
    expect(body.toString("hex")).toBe(`6b387300${Buffer.from(expected).toString("hex")}`);
  });

  it("writes varints past 2^31 and negative int64s as Go does (ten bytes, two's complement)", () => {
    const w = new ProtoWriter(4)
      .int(1, 2 ** 40)
      .int(2, -1)
      .int(3, 0);
    expect(w.finish().toString("hex")).toBe("08808080808020" + "10ffffffffffffffffff01" + "1800");
  });
});
