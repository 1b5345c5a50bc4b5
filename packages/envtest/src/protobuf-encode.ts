/**
 * The protobuf answers (`application/vnd.kubernetes.protobuf`) for Secrets, SecretLists and Status,
 * written as kube-apiserver 1.32's gogo-generated marshallers write them, so client-go decodes them
 * as it decodes the real server's: fields in ascending number order; every non-pointer string, int
 * and embedded message written even when empty or zero (ObjectMeta.selfLink "", generation 0, the
 * envelope's empty contentEncoding and contentType); pointers, maps and lists only when set; map
 * entries in sorted key order. Field numbers are those of k8s.io/api core/v1 and apimachinery's
 * generated.proto.
 */

import { bytesFieldHead, ProtoWriter } from "./protobuf-writer.ts";
import type { ManagedFieldsEntry, ObjectMeta, SecretJSON } from "./secret.ts";
import type { Status, StatusDetails } from "./status.ts";

/** The Content-Type of protobuf answers. */
export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";

/** The four bytes every Kubernetes protobuf body starts with: `k8s\0`. */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** runtime.Unknown's contentEncoding = 3 and contentType = 4, both empty: every envelope's end. */
const ENVELOPE_TAIL = Buffer.from([0x1a, 0x00, 0x22, 0x00]);

/**
 * A body as pieces to write: the magic and runtime.Unknown { typeMeta = 1, raw = 2,
 * contentEncoding = 3, contentType = 4 }, with `raw` (the object's message) given as pieces so that
 * cached messages are written, never copied.
 */
export function envelopeParts(kind: string, raw: readonly Buffer[]): Buffer[] {
  let length = 0;
  for (const p of raw) length += p.length;
  const head = new ProtoWriter(64);
  head.message(1, (t) => t.string(1, "v1").string(2, kind));
  return [Buffer.concat([MAGIC, head.view(), bytesFieldHead(2, length)]), ...raw, ENVELOPE_TAIL];
}

/**
 * metav1.Time { seconds = 1, nanos = 2 }: whole seconds, nanos always 0 (metav1.Time drops them);
 * an unparseable time is Go's zero time, an empty message.
 */
function writeTime(w: ProtoWriter, field: number, rfc3339: string): void {
  const ms = Date.parse(rfc3339);
  w.message(field, (t) => {
    if (!Number.isNaN(ms)) t.int(1, Math.floor(ms / 1000)).int(2, 0);
  });
}

/** The fields of an ownerReference as stored (it is kept as the client sent it). */
function writeOwnerReference(w: ProtoWriter, ref: unknown): void {
  const r = typeof ref === "object" && ref !== null ? (ref as Record<string, unknown>) : {};
  const str = (k: string) => (typeof r[k] === "string" ? (r[k] as string) : "");
  w.message(13, (o) => {
    o.string(1, str("kind")).string(3, str("name")).string(4, str("uid"));
    o.string(5, str("apiVersion"));
    if (typeof r.controller === "boolean") o.bool(6, r.controller);
    if (typeof r.blockOwnerDeletion === "boolean") o.bool(7, r.blockOwnerDeletion);
  });
}

/**
 * ManagedFieldsEntry: manager 1, operation 2, apiVersion 3, time 4, fieldsType 6, fieldsV1 7 (a
 * FieldsV1 { raw = 1 } holding the tree's JSON text, as the JSON answer shows it), subresource 8.
 */
function writeManagedFields(w: ProtoWriter, m: ManagedFieldsEntry): void {
  w.message(17, (e) => {
    e.string(1, m.manager).string(2, m.operation).string(3, m.apiVersion);
    writeTime(e, 4, m.time);
    e.string(6, m.fieldsType);
    e.message(7, (f) => f.bytes(1, Buffer.from(JSON.stringify(m.fieldsV1))));
    e.string(8, "");
  });
}

/**
 * Map keys in Go's sort.Strings order: byte order, which the default sort's UTF-16 order equals for
 * the ASCII keys Kubernetes allows in labels, annotations and data.
 */
function sortedKeys(m: Readonly<Record<string, unknown>> | undefined): string[] {
  return Object.keys(m ?? {}).sort();
}

function writeStringMap(
  w: ProtoWriter,
  field: number,
  m: Readonly<Record<string, string>> | undefined,
): void {
  for (const k of sortedKeys(m)) w.mapEntry(field, k, m?.[k] ?? "");
}

/**
 * ObjectMeta: name 1, generateName 2, namespace 3, selfLink 4, uid 5, resourceVersion 6,
 * generation 7, creationTimestamp 8, labels 11, annotations 12, ownerReferences 13, finalizers 14,
 * managedFields 17.
 */
function writeObjectMeta(w: ProtoWriter, m: ObjectMeta): void {
  w.string(1, m.name)
    .string(2, m.generateName ?? "")
    .string(3, m.namespace)
    .string(4, "");
  w.string(5, m.uid).string(6, m.resourceVersion).int(7, 0);
  writeTime(w, 8, m.creationTimestamp);
  writeStringMap(w, 11, m.labels);
  writeStringMap(w, 12, m.annotations);
  for (const ref of m.ownerReferences ?? []) writeOwnerReference(w, ref);
  for (const f of m.finalizers ?? []) w.string(14, f);
  for (const e of m.managedFields ?? []) writeManagedFields(w, e);
}

/**
 * The v1.Secret message (no envelope): metadata 1, data 2 (map<string, bytes>, the stored base64
 * decoded), type 3, immutable 5; stringData (4) is never stored.
 */
export function encodeSecret(s: SecretJSON): Buffer {
  const w = new ProtoWriter(512);
  w.message(1, (m) => writeObjectMeta(m, s.metadata));
  for (const k of sortedKeys(s.data)) w.mapEntry(2, k, Buffer.from(s.data?.[k] ?? "", "base64"));
  w.string(3, s.type);
  if (s.immutable !== undefined) w.bool(5, s.immutable);
  return w.finish();
}

/** A list's metadata: its resourceVersion, and where the next page starts and what remains. */
interface ListMetaFields {
  readonly rv?: number;
  readonly continueToken?: string;
  readonly remainingItemCount?: number;
}

/** ListMeta: selfLink 1, resourceVersion 2, continue 3, remainingItemCount 4 (only when set). */
function writeListMeta(w: ProtoWriter, field: number, m: ListMetaFields): void {
  w.message(field, (l) => {
    l.string(1, "").string(2, m.rv === undefined ? "" : String(m.rv));
    l.string(3, m.continueToken ?? "");
    if (m.remainingItemCount !== undefined) l.int(4, m.remainingItemCount);
  });
}

/**
 * A SecretList body as pieces: the envelope's head, ListMeta (1), then for each item (2) its tag
 * and length and the item's cached message, then the envelope's tail. Items are shared, never
 * copied; list items carry no TypeMeta in protobuf, so an item is the same message a GET answers.
 */
export function secretListProtoParts(meta: ListMetaFields, items: readonly Buffer[]): Buffer[] {
  const metaField = new ProtoWriter(128);
  writeListMeta(metaField, 1, meta);
  const heads = new ProtoWriter(items.length * 4 + 16);
  const ends: number[] = [];
  for (const item of items) {
    heads.head(2, item.length);
    ends.push(heads.length);
  }
  const all = heads.view();
  const raw: Buffer[] = [metaField.finish()];
  let start = 0;
  items.forEach((item, i) => {
    const end = ends[i] ?? start;
    raw.push(all.subarray(start, end), item);
    start = end;
  });
  return envelopeParts("SecretList", raw);
}

function writeDetails(w: ProtoWriter, d: StatusDetails): void {
  w.message(5, (s) => {
    s.string(1, d.name ?? "")
      .string(2, d.group ?? "")
      .string(3, d.kind ?? "");
    for (const c of d.causes ?? []) {
      s.message(4, (cause) =>
        cause
          .string(1, c.reason ?? "")
          .string(2, c.message ?? "")
          .string(3, c.field ?? ""),
      );
    }
    s.int(5, d.retryAfterSeconds ?? 0).string(6, d.uid ?? "");
  });
}

/**
 * metav1.Status: metadata 1 (an empty ListMeta), status 2, message 3, reason 4, details 5 (name 1,
 * group 2, kind 3, causes 4 {reason 1, message 2, field 3}, retryAfterSeconds 5, uid 6), code 6.
 * A delete's Success Status has no code: 0, which Go's JSON omits too.
 */
export function encodeStatus(s: Omit<Status, "code"> & { readonly code?: number }): Buffer {
  const w = new ProtoWriter(256);
  writeListMeta(w, 1, {});
  w.string(2, s.status)
    .string(3, s.message ?? "")
    .string(4, s.reason ?? "");
  if (s.details !== undefined) writeDetails(w, s.details);
  w.int(6, s.code ?? 0);
  return w.finish();
}

/**
 * One frame of a protobuf watch (`application/vnd.kubernetes.protobuf;stream=watch`): a 4-byte
 * big-endian length, then metav1.WatchEvent { type = 1, object = 2 (RawExtension { raw = 1 }) }
 * written without an envelope (apimachinery's protobuf RawSerializer, framed by its
 * LengthDelimitedFramer), its `raw` the object as a GET answers it, envelope and all (the watch
 * handler's embedded encoder).
 */
export function watchFrame(type: string, kind: string, raw: Buffer): Buffer {
  const object = Buffer.concat(envelopeParts(kind, [raw]));
  const w = new ProtoWriter(object.length + 32);
  w.string(1, type).message(2, (e) => e.bytes(1, object));
  const body = w.view();
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

/** A BOOKMARK frame: a Secret whose metadata holds only the resourceVersion and annotations. */
export function bookmarkFrame(rv: number, initialEventsEnd: boolean): Buffer {
  const metadata = {
    name: "",
    namespace: "",
    uid: "",
    resourceVersion: String(rv),
    creationTimestamp: "",
    ...(initialEventsEnd ? { annotations: { "k8s.io/initial-events-end": "true" } } : {}),
  };
  const secret: SecretJSON = { kind: "Secret", apiVersion: "v1", metadata, type: "" };
  return watchFrame("BOOKMARK", "Secret", encodeSecret(secret));
}
