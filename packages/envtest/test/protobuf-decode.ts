/**
 * A protobuf decoder for tests, written apart from the server's encoder: it turns the server's
 * protobuf answers back into the JSON a Go client would print for them (Go's omitempty rules), so
 * a test can compare them with the JSON answers whole. It is strict where the encoder could go
 * wrong unnoticed by a lenient reader: an unknown field number, a wrong wire type, fields out of
 * ascending order, or trailing bytes all throw.
 */

interface Field {
  readonly n: number;
  readonly varint?: bigint;
  readonly bytes?: Uint8Array;
}

function readVarint(buf: Uint8Array, at: { pos: number }): bigint {
  let result = 0n;
  for (let shift = 0n; shift < 70n; shift += 7n) {
    const b = buf[at.pos++];
    if (b === undefined) throw new Error("truncated varint");
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
  }
  throw new Error("varint longer than 10 bytes");
}

/** Field number → the wire type it must have: 0 varint, 2 length-delimited. */
type Schema = Readonly<Record<number, 0 | 2>>;

/** One message's fields, checked against its schema and for ascending order. */
class Msg {
  readonly fields: readonly Field[];

  constructor(buf: Uint8Array, schema: Schema, what: string) {
    const out: Field[] = [];
    const at = { pos: 0 };
    let last = 0;
    while (at.pos < buf.length) {
      const tag = Number(readVarint(buf, at));
      const n = tag >>> 3;
      const wire = tag & 7;
      if (schema[n] === undefined) throw new Error(`${what}: unknown field ${n}`);
      if (schema[n] !== wire) throw new Error(`${what}: field ${n} has wire type ${wire}`);
      if (n < last) throw new Error(`${what}: field ${n} written after field ${last}`);
      last = n;
      if (wire === 0) out.push({ n, varint: readVarint(buf, at) });
      else {
        const len = Number(readVarint(buf, at));
        if (at.pos + len > buf.length) throw new Error(`${what}: field ${n} runs past the end`);
        out.push({ n, bytes: buf.subarray(at.pos, at.pos + len) });
        at.pos += len;
      }
    }
    this.fields = out;
  }

  has(n: number): boolean {
    return this.fields.some((f) => f.n === n);
  }
  all(n: number): Uint8Array[] {
    return this.fields.flatMap((f) => (f.n === n && f.bytes !== undefined ? [f.bytes] : []));
  }
  bytes(n: number): Uint8Array | undefined {
    return this.all(n).at(-1);
  }
  string(n: number): string {
    const b = this.bytes(n);
    return b === undefined ? "" : Buffer.from(b).toString("utf8");
  }
  int(n: number): number | undefined {
    const v = this.fields.findLast((f) => f.n === n)?.varint;
    return v === undefined ? undefined : Number(BigInt.asIntN(64, v));
  }
}

/** Go's JSON for a struct: fields with the zero value left out (omitempty). */
function omitEmpty<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(o).filter(
      ([, v]) =>
        v !== undefined &&
        v !== "" &&
        v !== 0 &&
        !(Array.isArray(v) && v.length === 0) &&
        !(typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0),
    ),
  ) as Partial<T>;
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

/** The `k8s\0` + runtime.Unknown envelope. */
export function unwrap(body: Uint8Array) {
  if (!MAGIC.every((b, i) => body[i] === b)) throw new Error("no k8s\\0 prefix");
  const u = new Msg(body.subarray(4), { 1: 2, 2: 2, 3: 2, 4: 2 }, "Unknown");
  const t = new Msg(u.bytes(1) ?? new Uint8Array(), { 1: 2, 2: 2 }, "TypeMeta");
  return {
    envelope: {
      apiVersion: t.has(1) ? t.string(1) : undefined,
      kind: t.has(2) ? t.string(2) : undefined,
      contentEncoding: u.has(3) ? u.string(3) : undefined,
      contentType: u.has(4) ? u.string(4) : undefined,
    },
    raw: u.bytes(2) ?? new Uint8Array(),
  };
}

/** metav1.Time as RFC 3339 (seconds), null for the zero time (an empty message). */
function time(b: Uint8Array): string | null {
  const t = new Msg(b, { 1: 0, 2: 0 }, "Time");
  if (!t.has(1)) return null;
  return new Date((t.int(1) ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function stringMap(entries: readonly Uint8Array[]): Record<string, string> | undefined {
  if (entries.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    const m = new Msg(e, { 1: 2, 2: 2 }, "map entry");
    out[m.string(1)] = m.string(2);
  }
  return out;
}

function ownerReference(b: Uint8Array) {
  const o = new Msg(b, { 1: 2, 3: 2, 4: 2, 5: 2, 6: 0, 7: 0 }, "OwnerReference");
  const bool = (n: number) => (o.has(n) ? o.int(n) === 1 : undefined);
  return {
    apiVersion: o.string(5),
    kind: o.string(1),
    name: o.string(3),
    uid: o.string(4),
    ...omitEmpty({ controller: bool(6), blockOwnerDeletion: bool(7) }),
  };
}

function managedFieldsEntry(b: Uint8Array) {
  const e = new Msg(b, { 1: 2, 2: 2, 3: 2, 4: 2, 6: 2, 7: 2, 8: 2 }, "ManagedFieldsEntry");
  const f = e.bytes(7);
  const raw = f === undefined ? undefined : new Msg(f, { 1: 2 }, "FieldsV1").string(1);
  return omitEmpty({
    manager: e.string(1),
    operation: e.string(2),
    apiVersion: e.string(3),
    time: e.has(4) ? time(e.bytes(4) ?? new Uint8Array()) : undefined,
    fieldsType: e.string(6),
    fieldsV1: raw === undefined ? undefined : (JSON.parse(raw) as unknown),
    subresource: e.string(8),
  });
}

const OBJECT_META: Schema = {
  1: 2,
  2: 2,
  3: 2,
  4: 2,
  5: 2,
  6: 2,
  7: 0,
  8: 2,
  9: 2,
  10: 0,
  11: 2,
  12: 2,
  13: 2,
  14: 2,
  17: 2,
};

function objectMeta(b: Uint8Array) {
  const m = new Msg(b, OBJECT_META, "ObjectMeta");
  return {
    ...omitEmpty({
      name: m.string(1),
      generateName: m.string(2),
      namespace: m.string(3),
      selfLink: m.string(4),
      uid: m.string(5),
      resourceVersion: m.string(6),
      generation: m.int(7),
    }),
    creationTimestamp: time(m.bytes(8) ?? new Uint8Array()),
    ...omitEmpty({
      deletionTimestamp: m.has(9) ? time(m.bytes(9) ?? new Uint8Array()) : undefined,
      deletionGracePeriodSeconds: m.int(10),
      labels: stringMap(m.all(11)),
      annotations: stringMap(m.all(12)),
      ownerReferences: m.all(13).map(ownerReference),
      finalizers: m.all(14).map((f) => Buffer.from(f).toString("utf8")),
      managedFields: m.all(17).map(managedFieldsEntry),
    }),
  };
}

/** A v1.Secret message as Go prints it, but `data` values as bytes (Buffers), not base64. */
export function secret(b: Uint8Array) {
  const s = new Msg(b, { 1: 2, 2: 2, 3: 2, 4: 2, 5: 0 }, "Secret");
  const data: Record<string, Buffer> = {};
  for (const e of s.all(2)) {
    const m = new Msg(e, { 1: 2, 2: 2 }, "data entry");
    data[m.string(1)] = Buffer.from(m.bytes(2) ?? new Uint8Array());
  }
  return {
    metadata: objectMeta(s.bytes(1) ?? new Uint8Array()),
    ...(s.has(5) ? { immutable: s.int(5) === 1 } : {}),
    ...omitEmpty({ data, stringData: stringMap(s.all(4)), type: s.string(3) }),
  };
}

function listMeta(b: Uint8Array) {
  const m = new Msg(b, { 1: 2, 2: 2, 3: 2, 4: 0 }, "ListMeta");
  return {
    ...omitEmpty({ selfLink: m.string(1), resourceVersion: m.string(2), continue: m.string(3) }),
    ...(m.has(4) ? { remainingItemCount: m.int(4) } : {}),
  };
}

/** A v1.SecretList message; `items` is [] when there are none, as the JSON answer has it. */
export function secretList(b: Uint8Array) {
  const l = new Msg(b, { 1: 2, 2: 2 }, "SecretList");
  return { metadata: listMeta(l.bytes(1) ?? new Uint8Array()), items: l.all(2).map(secret) };
}

function statusCause(b: Uint8Array) {
  const c = new Msg(b, { 1: 2, 2: 2, 3: 2 }, "StatusCause");
  return omitEmpty({ reason: c.string(1), message: c.string(2), field: c.string(3) });
}

function statusDetails(b: Uint8Array) {
  const d = new Msg(b, { 1: 2, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2 }, "StatusDetails");
  return omitEmpty({
    name: d.string(1),
    group: d.string(2),
    kind: d.string(3),
    uid: d.string(6),
    causes: d.all(4).map(statusCause),
    retryAfterSeconds: d.int(5),
  });
}

/** A metav1.Status message as Go prints it (kind and apiVersion come from the envelope). */
export function status(b: Uint8Array) {
  const s = new Msg(b, { 1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 0 }, "Status");
  return {
    metadata: listMeta(s.bytes(1) ?? new Uint8Array()),
    ...omitEmpty({ status: s.string(2), message: s.string(3), reason: s.string(4) }),
    ...(s.has(5) ? { details: statusDetails(s.bytes(5) ?? new Uint8Array()) } : {}),
    ...omitEmpty({ code: s.int(6) }),
  };
}

/** A JSON Secret with its base64 `data` values turned into bytes, to compare with `secret()`. */
export function withDataBytes<T extends { data?: Record<string, string> }>(s: T) {
  const { data, ...rest } = s;
  return data === undefined
    ? rest
    : {
        ...rest,
        data: Object.fromEntries(
          Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64")]),
        ),
      };
}

/**
 * The frames of a protobuf watch body (a 4-byte big-endian length, then a metav1.WatchEvent
 * { type 1, object 2: RawExtension { raw 1 } } without an envelope), each with its object unwrapped.
 */
export function watchFrames(body: Buffer) {
  const frames: {
    type: string;
    envelope: ReturnType<typeof unwrap>["envelope"];
    raw: Uint8Array;
  }[] = [];
  for (let pos = 0; pos + 4 <= body.length; ) {
    const length = body.readUInt32BE(pos);
    if (pos + 4 + length > body.length) break;
    const e = new Msg(body.subarray(pos + 4, pos + 4 + length), { 1: 2, 2: 2 }, "WatchEvent");
    const ext = new Msg(e.bytes(2) ?? new Uint8Array(), { 1: 2 }, "RawExtension");
    frames.push({ type: e.string(1), ...unwrap(ext.bytes(1) ?? new Uint8Array()) });
    pos += 4 + length;
  }
  return frames;
}
