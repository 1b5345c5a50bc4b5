/**
 * Server-side printing: the meta.k8s.io/v1 Table kubectl asks for with `Accept:
 * application/json;as=Table;v=v1;g=meta.k8s.io`, with the columns the real server prints for
 * Secrets (NAME, TYPE, DATA, AGE) and for Namespaces.
 */
import type { SecretJSON } from "./secret.ts";

/** What each Table row carries in `object`. */
type IncludeObject = "None" | "Metadata" | "Object";

/** The `includeObject` query parameter; Metadata is the server's default. */
export function includeObjectOf(v: string | undefined): IncludeObject {
  return v === "None" || v === "Object" ? v : "Metadata";
}

interface Column {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly priority: number;
}

function col(name: string, description: string, format = ""): Column {
  return {
    name,
    type: "string",
    format,
    description,
    priority: 0,
  };
}

const NAME = col(
  "Name",
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
  "name",
);
const AGE = col(
  "Age",
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
);

/** The columns kube-apiserver prints for Secrets. */
export const SECRET_COLUMNS: readonly Column[] = [
  NAME,
  col(
    "Type",
    "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
  ),
  col(
    "Data",
    "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
  ),
  AGE,
];

/** The columns kube-apiserver prints for Namespaces. */
export const NAMESPACE_COLUMNS: readonly Column[] = [
  NAME,
  col("Status", "The status of the namespace"),
  AGE,
];

/** apimachinery's duration.HumanDuration, which the Age column uses. */
function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8)
    return days % 365 === 0 ? `${days / 365}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

/** The object a row carries: the whole object, its metadata only, or nothing. */
function rowObject(
  obj: { readonly kind: string; readonly apiVersion: string; readonly metadata: object },
  include: IncludeObject,
) {
  if (include === "None") return {};
  if (include === "Object") return { object: obj };
  return {
    object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: obj.metadata },
  };
}

function age(created: string, now: Date): string {
  return humanDuration(now.getTime() - Date.parse(created));
}

/** One Table row for a Secret. */
export function secretRow(s: SecretJSON, include: IncludeObject, now: Date): object {
  return {
    cells: [
      s.metadata.name,
      s.type,
      Object.keys(s.data ?? {}).length,
      age(s.metadata.creationTimestamp, now),
    ],
    ...rowObject(s, include),
  };
}

/** One Table row for a Namespace. */
export function namespaceRow(
  ns: {
    readonly kind: string;
    readonly apiVersion: string;
    readonly metadata: { readonly name: string; readonly creationTimestamp: string };
  },
  include: IncludeObject,
  now: Date,
): object {
  return {
    cells: [ns.metadata.name, "Active", age(ns.metadata.creationTimestamp, now)],
    ...rowObject(ns, include),
  };
}

/** A whole Table; `meta` is the list metadata (resourceVersion, continue, remainingItemCount). */
export function tableJson(
  columns: readonly Column[],
  rows: readonly object[],
  meta: object,
): string {
  return JSON.stringify({
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: meta,
    columnDefinitions: columns,
    rows,
  });
}
