/**
 * The v1 Secret as the fake API server stores and returns it, and the one place objects are
 * serialised: keys in the order the Go structs marshal them, map keys sorted as Go's encoding/json
 * sorts them, each object serialised once (as JSON, and as protobuf when a client asks for it).
 */

import { encodeSecret, watchFrame } from "./protobuf-encode.ts";

/** A managedFields `fieldsV1` tree: `{"f:data": {".": {}, "f:key": {}}}`. */
export type FieldsV1 = { readonly [path: string]: FieldsV1 };

/** One manager's claim on fields, as metadata.managedFields lists it. */
export interface ManagedFieldsEntry {
  readonly manager: string;
  readonly operation: "Apply" | "Update";
  readonly apiVersion: "v1";
  readonly time: string;
  readonly fieldsType: "FieldsV1";
  readonly fieldsV1: FieldsV1;
}

/** The ObjectMeta fields a stored Secret carries, in wire order. */
export interface ObjectMeta {
  readonly name: string;
  readonly generateName?: string;
  readonly namespace: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly creationTimestamp: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly unknown[];
  readonly finalizers?: readonly string[];
  readonly managedFields?: readonly ManagedFieldsEntry[];
}

/** A Secret exactly as `GET /api/v1/namespaces/{ns}/secrets/{name}` returns it. */
export interface SecretJSON {
  readonly kind: "Secret";
  readonly apiVersion: "v1";
  readonly metadata: ObjectMeta;
  readonly immutable?: boolean;
  /** Values are base64, as on the wire. */
  readonly data?: Readonly<Record<string, string>>;
  readonly type: string;
}

/** The parts of a Secret a write decides; the store fills in the rest. */
interface SecretParts {
  readonly name: string;
  readonly generateName?: string | undefined;
  readonly namespace: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly creationTimestamp: string;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  readonly ownerReferences?: readonly unknown[] | undefined;
  readonly finalizers?: readonly string[] | undefined;
  readonly managedFields?: readonly ManagedFieldsEntry[] | undefined;
  readonly immutable?: boolean | undefined;
  readonly data?: Readonly<Record<string, string>> | undefined;
  readonly type?: string | undefined;
}

/** Returns a copy with keys in byte order, or undefined for an empty map (Go's omitempty). */
export function sortedMap<V>(
  m: Readonly<Record<string, V>> | undefined,
): Readonly<Record<string, V>> | undefined {
  if (m === undefined) return undefined;
  const keys = Object.keys(m);
  if (keys.length === 0) return undefined;
  keys.sort(compareBytes);
  const out: Record<string, V> = {};
  for (const k of keys) out[k] = m[k] as V;
  return out;
}

/**
 * Orders strings as Go and etcd order them (UTF-16 order equals byte order for the ASCII keys
 * Kubernetes allows).
 */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function nonEmpty<T>(xs: readonly T[] | undefined): readonly T[] | undefined {
  return xs === undefined || xs.length === 0 ? undefined : xs;
}

/**
 * Builds a Secret with fields in wire order; `type` defaults to Opaque as the server's defaulting
 * does.
 */
export function buildSecret(p: SecretParts): SecretJSON {
  const metadata: ObjectMeta = {
    name: p.name,
    ...(p.generateName ? { generateName: p.generateName } : {}),
    namespace: p.namespace,
    uid: p.uid,
    resourceVersion: p.resourceVersion,
    creationTimestamp: p.creationTimestamp,
    ...optional("labels", sortedMap(p.labels)),
    ...optional("annotations", sortedMap(p.annotations)),
    ...optional("ownerReferences", nonEmpty(p.ownerReferences)),
    ...optional("finalizers", nonEmpty(p.finalizers)),
    ...optional("managedFields", nonEmpty(p.managedFields)),
  };
  return {
    kind: "Secret",
    apiVersion: "v1",
    metadata,
    ...(p.immutable === undefined ? {} : { immutable: p.immutable }),
    ...optional("data", sortedMap(p.data)),
    type: p.type === undefined || p.type === "" ? "Opaque" : p.type,
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The same Secret with another resourceVersion (a DELETED event carries the deletion's). */
export function withResourceVersion(s: SecretJSON, rv: number): SecretJSON {
  return {
    ...s,
    metadata: { ...s.metadata, resourceVersion: String(rv) },
  };
}

/** The store key, which is also the list order: etcd sorts `/registry/secrets/{ns}/{name}`. */
export function storeKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Encodes `stringData` values as the base64 `data` values they merge into. */
export function toBase64(m: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(m ?? {}).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]),
  );
}

/** Decoded byte length of a base64 string, without decoding it. */
function base64ByteLength(b64: string): number {
  let pad = 0;
  if (b64.endsWith("==")) pad = 2;
  else if (b64.endsWith("=")) pad = 1;
  return (b64.length / 4) * 3 - pad;
}

/** Total decoded bytes of `data`, the quantity the 1 MiB limit applies to. */
export function dataByteSize(data: Readonly<Record<string, string>> | undefined): number {
  let total = 0;
  for (const v of Object.values(data ?? {})) total += base64ByteLength(v);
  return total;
}

/** How every Secret's JSON starts, since buildSecret puts kind and apiVersion first. */
const TYPE_META = '{"kind":"Secret","apiVersion":"v1",';

/**
 * An immutable stored Secret (one resourceVersion of it) with its serialisations computed at most
 * once: every reader, every list and every watcher shares these bytes.
 */
export class StoredSecret {
  readonly obj: SecretJSON;
  readonly key: string;
  #full: string | undefined;
  #item: Buffer | undefined;
  #added: Buffer | undefined;
  #proto: Buffer | undefined;
  #addedFrame: Buffer | undefined;

  constructor(obj: SecretJSON) {
    this.obj = obj;
    this.key = storeKey(obj.metadata.namespace, obj.metadata.name);
  }

  /** JSON with kind and apiVersion, as a GET returns it. */
  get json(): string {
    this.#full ??= JSON.stringify(this.obj);
    return this.#full;
  }

  /**
   * UTF-8 JSON without kind and apiVersion, as a list item (the real server omits them there): the
   * GET JSON minus its first two keys, so an object is stringified once for every use.
   */
  get item(): Buffer {
    if (this.#item === undefined) {
      const json = this.json;
      this.#item = json.startsWith(TYPE_META)
        ? Buffer.from(`{${json.slice(TYPE_META.length)}`)
        : Buffer.from(JSON.stringify({ ...this.obj, kind: undefined, apiVersion: undefined }));
    }
    return this.#item;
  }

  /**
   * The v1.Secret protobuf message (without the envelope): a GET's `raw`, and a list item as is,
   * since protobuf list items carry no TypeMeta either.
   */
  get proto(): Buffer {
    this.#proto ??= encodeSecret(this.obj);
    return this.#proto;
  }

  /**
   * The synthetic ADDED line that starts a watch, shared by every watcher that starts from this
   * state.
   */
  get addedLine(): Buffer {
    this.#added ??= Buffer.from(`{"type":"ADDED","object":${this.json}}\n`);
    return this.#added;
  }

  /** The same ADDED event as a protobuf watch frame. */
  get addedFrame(): Buffer {
    this.#addedFrame ??= watchFrame("ADDED", "Secret", this.proto);
    return this.#addedFrame;
  }
}
