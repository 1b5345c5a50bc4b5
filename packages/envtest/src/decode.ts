/**
 * Request bodies to typed inputs: JSON, YAML or protobuf Secrets, plus the unknown fields
 * `fieldValidation` reports. Failures are the 400/415 Status the real decoder produces.
 */
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { decodeEnvelope, decodeSecretProto } from "./protobuf.ts";
import type { FieldsV1, ManagedFieldsEntry } from "./secret.ts";
import {
  badRequest,
  cannotHandle,
  failWith,
  type OrStatus,
  ok,
  unsupportedMediaType,
} from "./status.ts";

/** The ObjectMeta fields a client may send; the server decides the rest (uid, timestamps). */
export interface MetaInput {
  readonly name?: string | undefined;
  readonly generateName?: string | undefined;
  readonly namespace?: string | undefined;
  readonly uid?: string | undefined;
  readonly resourceVersion?: string | undefined;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  readonly finalizers?: readonly string[] | undefined;
  readonly ownerReferences?: readonly unknown[] | undefined;
  readonly managedFields?: readonly ManagedFieldsEntry[] | undefined;
}

/** A Secret as a client sent it: nothing defaulted, `data` values base64. */
export interface SecretInput {
  readonly apiVersion?: string | undefined;
  readonly kind?: string | undefined;
  readonly metadata: MetaInput;
  readonly data?: Readonly<Record<string, string>> | undefined;
  readonly stringData?: Readonly<Record<string, string>> | undefined;
  readonly type?: string | undefined;
  readonly immutable?: boolean | undefined;
}

/** The write body encodings the server decodes. */
type MediaType = "json" | "yaml" | "protobuf";

const ACCEPTED = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"];

/** Classifies a write's Content-Type; a missing one is read as JSON. */
export function mediaTypeOf(contentType: string | undefined): OrStatus<MediaType> {
  const base = (contentType ?? "application/json").split(";")[0]?.trim().toLowerCase() ?? "";
  if (base === "" || base === "application/json") return ok("json");
  if (base === "application/yaml") return ok("yaml");
  if (base === "application/vnd.kubernetes.protobuf") return ok("protobuf");
  return failWith(unsupportedMediaType(base, ACCEPTED));
}

/** Parses a JSON or YAML document into a plain value. */
export function parseDocument(body: Buffer, media: "json" | "yaml"): OrStatus<unknown> {
  const text = body.toString("utf8");
  try {
    return ok(media === "json" ? JSON.parse(text) : parseYaml(text));
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return failWith(badRequest(`couldn't get version/kind; json parse error: ${why}`));
  }
}

function isFieldsV1(v: unknown): v is FieldsV1 {
  return (
    typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every(isFieldsV1)
  );
}

const stringMap = z.record(z.string(), z.string()).nullish();
const managedFieldsEntry = z.object({
  manager: z.string().nullish(),
  operation: z.enum(["Apply", "Update"]),
  apiVersion: z.string().nullish(),
  time: z.string().nullish(),
  fieldsType: z.string().nullish(),
  fieldsV1: z.unknown(),
});
const metaSchema = z.object({
  name: z.string().nullish(),
  generateName: z.string().nullish(),
  namespace: z.string().nullish(),
  uid: z.string().nullish(),
  resourceVersion: z.string().nullish(),
  labels: stringMap,
  annotations: stringMap,
  finalizers: z.array(z.string()).nullish(),
  ownerReferences: z.array(z.unknown()).nullish(),
  managedFields: z.array(managedFieldsEntry).nullish(),
});
const secretSchema = z.object({
  apiVersion: z.string().nullish(),
  kind: z.string().nullish(),
  metadata: metaSchema.nullish(),
  data: stringMap,
  stringData: stringMap,
  type: z.string().nullish(),
  immutable: z.boolean().nullish(),
});

const SECRET_FIELDS = new Set([
  "apiVersion",
  "kind",
  "metadata",
  "data",
  "stringData",
  "type",
  "immutable",
]);
const META_FIELDS = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

/** The dotted paths of fields a v1.Secret does not have, as strict decoding names them. */
export function unknownSecretFields(value: unknown): string[] {
  if (typeof value !== "object" || value === null) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (!SECRET_FIELDS.has(k)) out.push(k);
    else if (k === "metadata" && typeof v === "object" && v !== null) {
      for (const mk of Object.keys(v)) if (!META_FIELDS.has(mk)) out.push(`metadata.${mk}`);
    }
  }
  return out;
}

function jsonTypeAt(value: unknown, path: readonly PropertyKey[]): string {
  let v: unknown = value;
  for (const p of path)
    v = typeof v === "object" && v !== null ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  return typeof v === "object" ? "object" : typeof v;
}

const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The byte offset where Go's strict base64 decoder would fail, or undefined when `v` decodes. */
function base64ErrorOffset(v: string): number | undefined {
  const clean = v.replace(/[\r\n]/g, "");
  if (STRICT_BASE64.test(clean) && clean.length % 4 === 0) return undefined;
  const bad = clean.search(/[^A-Za-z0-9+/=]/);
  return bad >= 0 ? bad : clean.length - (clean.length % 4);
}

function undef<T>(v: T | null | undefined): T | undefined {
  return v === null ? undefined : v;
}

/** Checks a decoded JSON/YAML value is a v1 Secret and normalises it to a SecretInput. */
export function secretFromValue(value: unknown): OrStatus<SecretInput> {
  const parsed = secretSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path ?? [];
    const want = issue?.code === "invalid_type" ? issue.expected : "valid value";
    return failWith(
      cannotHandle(
        "Secret",
        `json: cannot unmarshal ${jsonTypeAt(value, path)} into Go struct field Secret.${path.join(".")} of type ${want}`,
      ),
    );
  }
  const s = parsed.data;
  if (s.kind && s.kind !== "Secret") {
    return failWith(
      badRequest(`the object provided is unrecognized (must be of type Secret): kind ${s.kind}`),
    );
  }
  if (s.apiVersion && s.apiVersion !== "v1") {
    return failWith(
      badRequest(
        `the API version in the data (${s.apiVersion}) does not match the expected API version (v1)`,
      ),
    );
  }
  for (const v of Object.values(s.data ?? {})) {
    const at = base64ErrorOffset(v);
    if (at !== undefined)
      return failWith(cannotHandle("Secret", `illegal base64 data at input byte ${at}`));
  }
  const m = s.metadata ?? {};
  const managedFields = m.managedFields?.map(
    (e): ManagedFieldsEntry => ({
      manager: e.manager ?? "",
      operation: e.operation,
      apiVersion: "v1",
      time: e.time ?? "",
      fieldsType: "FieldsV1",
      fieldsV1: isFieldsV1(e.fieldsV1) ? e.fieldsV1 : {},
    }),
  );
  return ok({
    apiVersion: undef(s.apiVersion),
    kind: undef(s.kind),
    metadata: {
      name: undef(m.name),
      generateName: undef(m.generateName),
      namespace: undef(m.namespace),
      uid: undef(m.uid),
      resourceVersion: undef(m.resourceVersion),
      labels: undef(m.labels),
      annotations: undef(m.annotations),
      finalizers: undef(m.finalizers),
      ownerReferences: undef(m.ownerReferences),
      managedFields,
    },
    data: s.data
      ? Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, v.replace(/[\r\n]/g, "")]))
      : undefined,
    stringData: undef(s.stringData),
    type: undef(s.type),
    immutable: undef(s.immutable),
  });
}

/** Decodes a POST or PUT body into a Secret, with the unknown fields it carried. */
export function decodeSecretBody(
  body: Buffer,
  contentType: string | undefined,
): OrStatus<{ input: SecretInput; unknownFields: string[] }> {
  const media = mediaTypeOf(contentType);
  if (!media.ok) return media;
  if (media.value === "protobuf") {
    const env = decodeEnvelope(body);
    if (!env.ok) return env;
    if (env.value.kind !== "" && env.value.kind !== "Secret") {
      return failWith(
        badRequest(
          `the object provided is unrecognized (must be of type Secret): kind ${env.value.kind}`,
        ),
      );
    }
    const s = decodeSecretProto(env.value.raw);
    if (!s.ok) return s;
    return ok({
      input: { ...s.value, apiVersion: env.value.apiVersion, kind: env.value.kind },
      unknownFields: [],
    });
  }
  const doc = parseDocument(body, media.value);
  if (!doc.ok) return doc;
  const input = secretFromValue(doc.value);
  if (!input.ok) return input;
  return ok({ input: input.value, unknownFields: unknownSecretFields(doc.value) });
}
