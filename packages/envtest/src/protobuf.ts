/**
 * A hand-written decoder for exactly the protobuf messages kubectl sends this server: the `k8s\0` +
 * runtime.Unknown envelope around a v1.Secret, Namespace or DeleteOptions (field numbers from
 * k8s.io/api core/v1 generated.proto and apimachinery's generated.proto). Unknown fields are
 * skipped by wire type.
 */

import { readMapEntry, readMessage, type WireReader } from "./protobuf-wire.ts";
import {
  badRequest,
  cannotHandle,
  failWith,
  type OrStatus,
  ok,
  type StatusFailure,
} from "./status.ts";

/** The four bytes every Kubernetes protobuf body starts with. */
const PROTOBUF_MAGIC = Uint8Array.from([0x6b, 0x38, 0x73, 0x00]);

/** Runs a decoder; a malformed message becomes the 400 `refuse` words (default: BadRequest). */
function guard<T>(
  what: string,
  f: () => T,
  refuse: (why: string) => StatusFailure = badRequest,
): OrStatus<T> {
  try {
    return ok(f());
  } catch (e) {
    return failWith(
      refuse(`unable to decode ${what}: ${e instanceof Error ? e.message : String(e)}`),
    );
  }
}

function utf8(b: Uint8Array): string {
  return Buffer.from(b).toString("utf8");
}

/** The runtime.Unknown wrapper: the type of the object in `raw` and how it is encoded. */
interface UnknownEnvelope {
  readonly apiVersion: string;
  readonly kind: string;
  readonly raw: Uint8Array;
  readonly contentEncoding: string;
  readonly contentType: string;
}

/**
 * Strips the magic and decodes runtime.Unknown { typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2,
 * contentEncoding = 3, contentType = 4 }.
 */
export function decodeEnvelope(body: Uint8Array): OrStatus<UnknownEnvelope> {
  if (body.length < 4 || !PROTOBUF_MAGIC.every((b, i) => body[i] === b)) {
    return failWith(
      badRequest(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
      ),
    );
  }
  return guard("runtime.Unknown", () => {
    const e = {
      apiVersion: "",
      kind: "",
      raw: new Uint8Array() as Uint8Array,
      contentEncoding: "",
      contentType: "",
    };
    readMessage(body.subarray(4), {
      bytes: {
        1: (r) =>
          readMessage(r.bytes(), {
            bytes: {
              1: (t) => {
                e.apiVersion = t.string();
              },
              2: (t) => {
                e.kind = t.string();
              },
            },
          }),
        2: (r) => {
          e.raw = r.bytes();
        },
        3: (r) => {
          e.contentEncoding = r.string();
        },
        4: (r) => {
          e.contentType = r.string();
        },
      },
    });
    return e;
  });
}

/** The ObjectMeta fields a write can set. */
interface ProtoObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

type StringField = "name" | "generateName" | "namespace" | "uid" | "resourceVersion";

/**
 * ObjectMeta: name 1, generateName 2, namespace 3, uid 5, resourceVersion 6, labels 11, annotations
 * 12, finalizers 14.
 */
function readObjectMeta(buf: Uint8Array): ProtoObjectMeta {
  const m: ProtoObjectMeta = {};
  const str = (key: StringField) => (r: WireReader) => {
    m[key] = r.string();
  };
  const map = (key: "labels" | "annotations") => (r: WireReader) => {
    const [k, v] = readMapEntry(r);
    m[key] = { ...m[key], [k]: utf8(v) };
  };
  readMessage(buf, {
    bytes: {
      1: str("name"),
      2: str("generateName"),
      3: str("namespace"),
      5: str("uid"),
      6: str("resourceVersion"),
      11: map("labels"),
      12: map("annotations"),
      14: (r) => {
        m.finalizers = [...(m.finalizers ?? []), r.string()];
      },
    },
  });
  return m;
}

/** A v1.Secret as decoded from protobuf; `data` values are base64, as in JSON. */
interface ProtoSecret {
  metadata: ProtoObjectMeta;
  data?: Record<string, string>;
  type?: string;
  stringData?: Record<string, string>;
  immutable?: boolean;
}

/**
 * Secret: metadata 1, data 2 (map<string, bytes>), type 3, stringData 4 (map<string, string>),
 * immutable 5.
 */
export function decodeSecretProto(raw: Uint8Array): OrStatus<ProtoSecret> {
  return guard(
    "v1.Secret",
    () => {
      const s: ProtoSecret = { metadata: {} };
      readMessage(raw, {
        bytes: {
          1: (r) => {
            s.metadata = readObjectMeta(r.bytes());
          },
          2: (r) => {
            const [k, v] = readMapEntry(r);
            s.data = { ...s.data, [k]: Buffer.from(v).toString("base64") };
          },
          3: (r) => {
            s.type = r.string();
          },
          4: (r) => {
            const [k, v] = readMapEntry(r);
            s.stringData = { ...s.stringData, [k]: utf8(v) };
          },
        },
        varint: {
          5: (v) => {
            s.immutable = v !== 0;
          },
        },
      });
      return s;
    },
    (why) => cannotHandle("Secret", why),
  );
}

/** Namespace: metadata 1 (spec and status are not needed). */
export function decodeNamespaceProto(raw: Uint8Array): OrStatus<{ metadata: ProtoObjectMeta }> {
  return guard("v1.Namespace", () => {
    let metadata: ProtoObjectMeta = {};
    readMessage(raw, {
      bytes: {
        1: (r) => {
          metadata = readObjectMeta(r.bytes());
        },
      },
    });
    return { metadata };
  });
}

/** The DeleteOptions fields the server honours. */
interface ProtoDeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  dryRun?: string[];
}

/** DeleteOptions: preconditions 2 {uid 1, resourceVersion 2}, propagationPolicy 4, dryRun 5. */
export function decodeDeleteOptionsProto(raw: Uint8Array): OrStatus<ProtoDeleteOptions> {
  return guard("DeleteOptions", () => {
    const o: ProtoDeleteOptions = {};
    readMessage(raw, {
      bytes: {
        2: (r) => {
          const pre: { uid?: string; resourceVersion?: string } = {};
          readMessage(r.bytes(), {
            bytes: {
              1: (p) => {
                pre.uid = p.string();
              },
              2: (p) => {
                pre.resourceVersion = p.string();
              },
            },
          });
          o.preconditions = pre;
        },
        4: (r) => {
          o.propagationPolicy = r.string();
        },
        5: (r) => {
          o.dryRun = [...(o.dryRun ?? []), r.string()];
        },
      },
    });
    return o;
  });
}
