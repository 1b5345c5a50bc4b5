// The few Kubernetes messages the mirror reads in protobuf, decoded into the same values
// the JSON decoders give (wire.ts): a Secret, a list's metadata and a Status. Field numbers are
// those of k8s.io/api core/v1 and apimachinery meta/v1 `generated.proto`. Like the JSON decoders,
// failures name where, never a value.

import { err, ok, type Result } from "../../result.ts";
import type { ApiStatus, ListPage, SecretObject } from "../cache/list-watch.ts";
import { Interned, LENGTH_DELIMITED, MAGIC, VARINT, WireReader } from "./protobuf-wire.ts";
import { secretData } from "./secret-data.ts";

interface DecodeFailure {
  readonly message: string;
}

const failed = (what: string, r: WireReader): Result<never, DecodeFailure> =>
  err({ message: `${what}: ${r.failure}` });

type Metadata = SecretObject["metadata"];

/** The texts every Secret repeats: its kind, namespace, keys and type (not its name). */
export const RECURRING = new Interned();

/** A `map<string, string>` or `map<string, bytes>` entry: key = 1, value = 2. */
function mapEntry(r: WireReader, value: (r: WireReader) => string): [string, string] {
  const entry = r.message();
  let key = "";
  let v = "";
  while (entry.more) {
    const tag = entry.varint();
    if (tag === (1 << 3) + LENGTH_DELIMITED) key = RECURRING.read(entry);
    else if (tag === (2 << 3) + LENGTH_DELIMITED) v = value(entry);
    else entry.skip(tag & 7);
  }
  if (entry.failure !== null) r.fail(entry.failure);
  return [key, v];
}

const text = (r: WireReader): string => r.string();
const bytes = (r: WireReader): string => r.bytes();

/**
 * ObjectMeta: name 1, namespace 3, uid 5, resourceVersion 6, labels 11; the rest is skipped. A
 * message field met twice is merged, as protobuf requires, so `into` carries the earlier one.
 */
function objectMeta(r: WireReader, into: Metadata | undefined): Metadata {
  const meta = r.message();
  let name = into?.name ?? "";
  let namespace = into?.namespace ?? "";
  let uid = into?.uid ?? "";
  let resourceVersion = into?.resourceVersion ?? "";
  // Entries, made a record at the end: assigning a key named `__proto__` would drop it.
  let labels: [string, string][] | undefined = into?.labels && Object.entries(into.labels);
  while (meta.more) {
    const tag = meta.varint();
    switch (tag) {
      case (1 << 3) + LENGTH_DELIMITED:
        name = meta.string();
        break;
      case (3 << 3) + LENGTH_DELIMITED:
        namespace = RECURRING.read(meta);
        break;
      case (5 << 3) + LENGTH_DELIMITED:
        uid = meta.string();
        break;
      case (6 << 3) + LENGTH_DELIMITED:
        resourceVersion = meta.string();
        break;
      case (11 << 3) + LENGTH_DELIMITED: {
        labels ??= [];
        labels.push(mapEntry(meta, text));
        break;
      }
      default:
        meta.skip(tag & 7);
    }
  }
  if (meta.failure !== null) r.fail(meta.failure);
  // Built field by field, not spread: this runs once per watch event.
  const out: Mutable<Metadata> = { namespace, name, resourceVersion };
  if (uid !== "") out.uid = uid;
  if (labels !== undefined && labels.length > 0) out.labels = Object.fromEntries(labels);
  return out;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * A v1.Secret message in `r` (metadata 1, data 2 as map<string, bytes>, type 3), with `data` as
 * byte strings like the JSON decoder's. Proto2 writes empty strings, so an empty name, namespace or
 * resourceVersion means the field was missing.
 */
export function decodeSecretMessage(
  r: WireReader,
  what = "Secret",
): Result<SecretObject, DecodeFailure> {
  let metadata: Metadata | undefined;
  let type = "";
  let data: [string, string][] | undefined;
  while (r.more) {
    const tag = r.varint();
    if (tag === (1 << 3) + LENGTH_DELIMITED) metadata = objectMeta(r, metadata);
    else if (tag === (2 << 3) + LENGTH_DELIMITED) {
      data ??= [];
      data.push(mapEntry(r, bytes));
    } else if (tag === (3 << 3) + LENGTH_DELIMITED) type = RECURRING.read(r);
    else r.skip(tag & 7);
  }
  if (r.failure !== null) return failed(what, r);
  for (const field of ["namespace", "name", "resourceVersion"] as const)
    if (!metadata?.[field]) return err({ message: `${what}: required at metadata.${field}` });
  const secret: Mutable<SecretObject> = { metadata: metadata! };
  if (type !== "") secret.type = type;
  if (data !== undefined) secret.data = secretData(data);
  return ok(secret);
}

/** ListMeta: resourceVersion 2, continue 3 (selfLink and remainingItemCount are skipped). */
export function decodeListMeta(r: WireReader): Result<ListPage, DecodeFailure> {
  let resourceVersion = "";
  let token = "";
  while (r.more) {
    const tag = r.varint();
    if (tag === (2 << 3) + LENGTH_DELIMITED) resourceVersion = r.string();
    else if (tag === (3 << 3) + LENGTH_DELIMITED) token = r.string();
    else r.skip(tag & 7);
  }
  if (r.failure !== null) return failed("SecretList metadata", r);
  if (resourceVersion === "")
    return err({ message: "SecretList metadata: required at resourceVersion" });
  return ok(token ? { resourceVersion, continue: token } : { resourceVersion });
}

/** The kind an envelope's TypeMeta { apiVersion 1, kind 2 } names; "" when malformed. */
export function typeMetaKind(typeMeta: WireReader): string {
  let kind = "";
  while (typeMeta.more) {
    const tag = typeMeta.varint();
    if (tag === (2 << 3) + LENGTH_DELIMITED) kind = RECURRING.read(typeMeta);
    else typeMeta.skip(tag & 7);
  }
  return typeMeta.failure === null ? kind : "";
}

/**
 * The envelope at `buf[start, end)`: the magic, then runtime.Unknown { typeMeta 1, raw 2 }. The
 * kind its TypeMeta names ("" for none) and its message; null without the magic. Each caller
 * says in its own words what it expected.
 */
export function readEnvelope(
  buf: Buffer,
  start: number,
  end: number,
): {
  readonly kind: string;
  readonly inner: WireReader | undefined;
  readonly r: WireReader;
} | null {
  // Compared in place: a view per watch event was a measurable share of decoding 100k of them.
  if (end - start < MAGIC.length || !MAGIC.every((b, i) => buf[start + i] === b)) return null;
  const r = new WireReader(buf, start + MAGIC.length, end);
  let kind = "";
  let inner: WireReader | undefined;
  while (r.more) {
    const tag = r.varint();
    if (tag === (1 << 3) + LENGTH_DELIMITED) kind = typeMetaKind(r.message());
    else if (tag === (2 << 3) + LENGTH_DELIMITED) inner = r.message();
    else r.skip(tag & 7);
  }
  return { kind, inner, r };
}

/** A whole protobuf error body: the magic, then runtime.Unknown around a metav1.Status. */
export function decodeStatusBody(body: Buffer): Result<ApiStatus, DecodeFailure> {
  const envelope = readEnvelope(body, 0, body.length);
  if (envelope === null) return err({ message: "Status: not a Kubernetes protobuf body" });
  const { kind, inner, r } = envelope;
  if (r.failure !== null) return failed("Status", r);
  if (kind !== "Status" || inner === undefined)
    return err({ message: `Status: the body holds a ${kind || "nameless"} object` });
  return statusMessage(inner);
}

/** metav1.Status: message 3, reason 4, details 5 { retryAfterSeconds 5 }, code 6. */
function statusMessage(r: WireReader): Result<ApiStatus, DecodeFailure> {
  let code = 0;
  let reason = "";
  let message = "";
  let retryAfterSeconds: number | undefined;
  while (r.more) {
    const tag = r.varint();
    if (tag === (3 << 3) + LENGTH_DELIMITED) message = r.string();
    else if (tag === (4 << 3) + LENGTH_DELIMITED) reason = r.string();
    else if (tag === (6 << 3) + VARINT) code = r.varint();
    else if (tag === (5 << 3) + LENGTH_DELIMITED) {
      const details = r.message();
      while (details.more) {
        const t = details.varint();
        // Written even when 0, which JSON omits (omitempty): 0 is no Retry-After either way.
        if (t === (5 << 3) + VARINT) retryAfterSeconds = details.varint() || undefined;
        else details.skip(t & 7);
      }
      if (details.failure !== null) r.fail(details.failure);
    } else r.skip(tag & 7);
  }
  if (r.failure !== null) return failed("Status", r);
  return ok({
    code,
    ...(reason === "" ? {} : { reason }),
    ...(message === "" ? {} : { message }),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}
