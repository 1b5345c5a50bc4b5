// Builds Kubernetes protobuf bodies for tests, field by field: messages are arrays of encoded
// fields, so a test can add what a real server may send and the mirror does not read.

import type { SecretObject } from "../../src/kube/cache/list-watch.ts";

/** One encoded field (key and value). */
export type PbField = Buffer;

function varintBytes(n: number | bigint): Buffer {
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n; // int32/int64 negatives take ten bytes, as Go writes them
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

const key = (field: number, wireType: number): Buffer => varintBytes(field * 8 + wireType);

export const pbVarint = (field: number, value: number | bigint): PbField =>
  Buffer.concat([key(field, 0), varintBytes(value)]);

export const pbBytes = (field: number, value: Uint8Array | string): PbField => {
  const b = typeof value === "string" ? Buffer.from(value, "utf8") : Buffer.from(value);
  return Buffer.concat([key(field, 2), varintBytes(b.length), b]);
};

export const pbMessage = (field: number, ...fields: readonly PbField[]): PbField =>
  pbBytes(field, Buffer.concat(fields));

export const pbFixed64 = (field: number): PbField =>
  Buffer.concat([key(field, 1), Buffer.alloc(8, 7)]);

export const pbFixed32 = (field: number): PbField =>
  Buffer.concat([key(field, 5), Buffer.alloc(4, 7)]);

/** A map<string, string|bytes> entry as field `field`: key = 1, value = 2. */
export const pbMapEntry = (field: number, k: string, v: Uint8Array | string): PbField =>
  pbMessage(field, pbBytes(1, k), pbBytes(2, v));

const MAGIC = Buffer.from("k8s\0", "latin1");

/** The `k8s\0` magic and runtime.Unknown around an object's message, as the API server sends it. */
export function pbEnvelope(kind: string, raw: Buffer, ...extra: readonly PbField[]): Buffer {
  return Buffer.concat([
    MAGIC,
    pbMessage(1, pbBytes(1, "v1"), pbBytes(2, kind)),
    pbBytes(2, raw),
    pbBytes(3, ""),
    pbBytes(4, ""),
    ...extra,
  ]);
}

/** What a test Secret holds: the mirror's metadata and type, laid flat, and `data` values as bytes. */
export type PbSecret = SecretObject["metadata"] &
  Pick<SecretObject, "type"> & { readonly data?: Readonly<Record<string, Uint8Array>> };

/** A v1.Secret message laid out as Go writes it: empty proto2 strings included. */
export function pbSecret(s: PbSecret, ...extra: readonly PbField[]): Buffer {
  const meta = pbMessage(
    1,
    pbBytes(1, s.name),
    pbBytes(2, ""),
    pbBytes(3, s.namespace),
    pbBytes(4, ""),
    pbBytes(5, s.uid ?? ""),
    pbBytes(6, s.resourceVersion),
    pbVarint(7, 0),
    pbMessage(8, pbVarint(1, 1_764_547_200)),
    ...Object.entries(s.labels ?? {}).map(([k, v]) => pbMapEntry(11, k, v)),
    pbMessage(17, pbBytes(1, "envtest"), pbBytes(2, "Update"), pbMessage(7, pbBytes(1, "{}"))),
  );
  return Buffer.concat([
    meta,
    ...Object.entries(s.data ?? {}).map(([k, v]) => pbMapEntry(2, k, v)),
    pbBytes(3, s.type ?? ""),
    ...extra,
  ]);
}

/** A SecretList body: ListMeta { resourceVersion 2, continue 3 } and the items. */
export function pbSecretList(
  meta: { readonly resourceVersion: string; readonly continue?: string },
  items: readonly Buffer[],
): Buffer {
  const list = Buffer.concat([
    pbMessage(1, pbBytes(1, ""), pbBytes(2, meta.resourceVersion), pbBytes(3, meta.continue ?? "")),
    ...items.map((item) => pbBytes(2, item)),
  ]);
  return pbEnvelope("SecretList", list);
}
