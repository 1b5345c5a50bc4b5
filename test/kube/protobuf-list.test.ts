import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SecretObject } from "../../src/kube/cache/list-watch.ts";
import { createProtobufListReader } from "../../src/kube/codec/protobuf-list.ts";
import { decodeSecretMessage, decodeStatusBody } from "../../src/kube/codec/protobuf-objects.ts";
import { WireReader } from "../../src/kube/codec/protobuf-wire.ts";
import {
  type PbSecret,
  pbBytes,
  pbEnvelope,
  pbFixed32,
  pbFixed64,
  pbMessage,
  pbSecret,
  pbSecretList,
  pbVarint,
} from "../support/protobuf.ts";

/** Feeds body in the given chunks; the items and the page, or the first failure. */
function read(body: Buffer, cuts: readonly number[] = [], maxFieldBytes?: number) {
  const reader = createProtobufListReader(maxFieldBytes);
  const items: SecretObject[] = [];
  let from = 0;
  for (const to of [...[...cuts].sort((a, b) => a - b), body.length]) {
    const r = reader.push(body.subarray(from, to));
    if (!r.ok) return { failure: r.error };
    items.push(...r.value);
    from = to;
  }
  const page = reader.end();
  return page.ok ? { items, page: page.value } : { failure: page.error };
}

/** What the JSON decoder gives for the same Secret: data as byte strings, empty fields absent. */
function expected(s: PbSecret): SecretObject {
  return {
    metadata: {
      namespace: s.namespace,
      name: s.name,
      resourceVersion: s.resourceVersion,
      ...(s.uid ? { uid: s.uid } : {}),
      ...(s.labels && Object.keys(s.labels).length > 0 ? { labels: { ...s.labels } } : {}),
    },
    ...(s.type ? { type: s.type } : {}),
    ...(s.data && Object.keys(s.data).length > 0
      ? {
          data: Object.fromEntries(
            Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v).toString("latin1")]),
          ),
        }
      : {}),
  };
}

const dns = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const secret: fc.Arbitrary<PbSecret> = fc.record(
  {
    namespace: dns,
    name: dns,
    resourceVersion: fc.nat().map((n) => String(n + 1)),
    uid: fc.uuid(),
    labels: fc.dictionary(dns, fc.string({ unit: "grapheme", maxLength: 8 }), { maxKeys: 3 }),
    type: fc.constantFrom("Opaque", "kubernetes.io/tls", ""),
    data: fc.dictionary(dns, fc.uint8Array({ maxLength: 40 }), { maxKeys: 3 }),
  },
  { requiredKeys: ["namespace", "name", "resourceVersion"] },
);
/** Fields a newer server might add, which the reader must step over. */
const unknown = fc.constantFrom(
  [],
  [pbVarint(9, 300)],
  [pbBytes(15, "x".repeat(200))],
  [pbFixed64(21), pbFixed32(22)],
);

describe("createProtobufListReader", () => {
  it("gives every item and the page whole, wherever the chunks are cut", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(secret, unknown), { maxLength: 6 }),
        fc.option(dns, { nil: undefined }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (secrets, token, cuts) => {
          const body = pbSecretList(
            { resourceVersion: "77", ...(token ? { continue: token } : {}) },
            secrets.map(([s, extra]) => pbSecret(s, ...extra)),
          );
          expect(
            read(
              body,
              cuts.map((c) => c % (body.length + 1)),
            ),
          ).toEqual({
            items: secrets.map(([s]) => expected(s)),
            page: token ? { resourceVersion: "77", continue: token } : { resourceVersion: "77" },
          });
        },
      ),
    );
  });

  it("reads one byte at a time, and steps over unknown fields of the envelope and the list", () => {
    const s = {
      namespace: "tenant-a",
      name: "app",
      resourceVersion: "5",
      data: { k: new Uint8Array([0, 255]) },
    };
    const list = Buffer.concat([
      pbBytes(7, "a list field from the future"),
      pbMessage(1, pbBytes(2, "9")),
      pbBytes(2, pbSecret(s)),
      pbVarint(3, 12),
    ]);
    const body = pbEnvelope("SecretList", list, pbBytes(9, "y".repeat(5000)));
    const cuts = Array.from({ length: body.length - 1 }, (_, i) => i + 1);
    expect(read(body, cuts)).toEqual({ items: [expected(s)], page: { resourceVersion: "9" } });
  });

  it("keeps keys named __proto__, as the JSON decoder does", () => {
    const s = {
      namespace: "ns",
      name: "n",
      resourceVersion: "1",
      labels: Object.fromEntries([["__proto__", "label"]]),
      data: Object.fromEntries([
        ["__proto__", Buffer.from("v")],
        ["k", Buffer.from("w")],
      ]),
    };
    const result = read(pbSecretList({ resourceVersion: "2" }, [pbSecret(s)]));
    const item = result.items?.[0];
    expect(Object.entries(item?.metadata.labels ?? {})).toEqual([["__proto__", "label"]]);
    expect(Object.entries(item?.data ?? {})).toEqual([
      ["__proto__", "v"],
      ["k", "w"],
    ]);
  });

  it("refuses what is not a whole SecretList, naming where and never a value", () => {
    const s = {
      namespace: "ns",
      name: "n",
      resourceVersion: "1",
      data: { key: Buffer.from("s3cr3t-value") },
    };
    const item = pbSecret(s);
    const body = pbSecretList({ resourceVersion: "2" }, [item]);
    const cases: [Buffer, string][] = [
      [Buffer.from('{"kind":"SecretList"}'), "list body is not a Kubernetes protobuf message"],
      [body.subarray(0, body.length - 5), "list body ended before its message did"],
      [pbEnvelope("Status", Buffer.alloc(0)), "list body holds a Status object"],
      [
        pbSecretList({ resourceVersion: "2" }, [pbSecret({ ...s, name: "" })]),
        "SecretList item 0: required at metadata.name",
      ],
      [pbEnvelope("SecretList", pbBytes(2, item)), "SecretList: required at metadata"],
      [
        pbEnvelope("SecretList", Buffer.concat([pbBytes(2, item), Buffer.from([0x0b])])),
        "list body has unsupported wire type 3",
      ],
      [
        pbEnvelope("SecretList", Buffer.concat([pbBytes(2, item.subarray(0, 20))])),
        "SecretList item 0: length-delimited field runs past its message",
      ],
    ];
    for (const [input, failure] of cases) {
      const result = read(input, [3, 30]);
      expect(result).toEqual({ failure });
      expect(JSON.stringify(result)).not.toContain("s3cr3t");
    }
    expect(read(body, [], 64)).toEqual({
      failure: `list item of ${item.length} bytes exceeds the limit`,
    });
  });
});

describe("decodeSecretMessage", () => {
  // Captured from kubectl v1.32 (Go's generated encoder): the body of
  // `kubectl create secret generic app-credentials -n tenant-a --from-literal=token=s3cr3t
  // --from-file=blob=<bytes 00 01 fe ff> --type=example.com/custom`. A create carries no
  // resourceVersion, so the test appends one the way protobuf merges a repeated message field.
  const kubectlBody = Buffer.from(
    "6b3873000a0c0a0276311206536563726574125c0a270a0f6170702d63726564656e7469616c7312001a0874656e616e742d6122002a00320038004200120c0a04626c6f6212040001feff120f0a05746f6b656e12067333637233741a126578616d706c652e636f6d2f637573746f6d1a002200",
    "hex",
  );
  const raw = () => {
    const r = new WireReader(kubectlBody, 4);
    let out: WireReader | undefined;
    while (r.more) {
      const tag = r.varint();
      if (tag === 0x12) out = r.message();
      else r.skip(tag & 7);
    }
    return kubectlBody.subarray(out!.pos, out!.end);
  };

  it("decodes the Secret Go writes, merging a second metadata field into the first", () => {
    const merged = Buffer.concat([
      raw(),
      pbMessage(
        1,
        pbBytes(6, "12345"),
        pbBytes(11, Buffer.concat([pbBytes(1, "team"), pbBytes(2, "payments")])),
      ),
    ]);
    expect(decodeSecretMessage(new WireReader(merged))).toEqual({
      ok: true,
      value: {
        metadata: {
          namespace: "tenant-a",
          name: "app-credentials",
          resourceVersion: "12345",
          labels: { team: "payments" },
        },
        type: "example.com/custom",
        data: { blob: "\x00\x01\xfe\xff", token: "s3cr3t" },
      },
    });
    expect(decodeSecretMessage(new WireReader(raw()))).toEqual({
      ok: false,
      error: { message: "Secret: required at metadata.resourceVersion" },
    });
  });
});

describe("decodeStatusBody", () => {
  it("reads a protobuf Status: code, reason, message and details.retryAfterSeconds", () => {
    const status = Buffer.concat([
      pbMessage(1),
      pbBytes(2, "Failure"),
      pbBytes(3, "too many requests, please try again later"),
      pbBytes(4, "TooManyRequests"),
      pbMessage(5, pbBytes(1, ""), pbVarint(5, 7)),
      pbVarint(6, 429),
    ]);
    expect(decodeStatusBody(pbEnvelope("Status", status))).toEqual({
      ok: true,
      value: {
        code: 429,
        reason: "TooManyRequests",
        message: "too many requests, please try again later",
        retryAfterSeconds: 7,
      },
    });
    expect(decodeStatusBody(pbEnvelope("Secret", status))).toEqual({
      ok: false,
      error: { message: "Status: the body holds a Secret object" },
    });
    expect(decodeStatusBody(Buffer.from("{}"))).toEqual({
      ok: false,
      error: { message: "Status: not a Kubernetes protobuf body" },
    });
  });
});
