/**
 * Field ownership for Secrets, the minimal managedFields server-side apply needs: every leaf a
 * Secret can have (a data key, a label, an annotation, type, immutable, a finalizer) as a path, its
 * value, and which manager owns it.
 */
import type { FieldsV1, ManagedFieldsEntry, SecretJSON } from "./secret.ts";

/** A leaf path, segments joined by NUL so keys may contain dots. */
export type FieldPath = string;

const SEP = "\u0000";
/** Joins segments into a leaf path. */
function path(...segments: string[]): FieldPath {
  return segments.join(SEP);
}
/** Splits a leaf path into its segments. */
export function segments(p: FieldPath): string[] {
  return p.split(SEP);
}

/** Leaf values of a Secret-shaped object, compared to decide what a write changed. */
export interface Leaves {
  readonly data?: Readonly<Record<string, string>> | undefined;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  readonly finalizers?: readonly string[] | undefined;
  readonly type?: string | undefined;
  readonly immutable?: boolean | undefined;
}

/** Every leaf path of `l` with a comparable value. */
export function fieldsOf(l: Leaves): Map<FieldPath, string> {
  const out = new Map<FieldPath, string>();
  for (const [k, v] of Object.entries(l.data ?? {})) out.set(path("data", k), v);
  for (const [k, v] of Object.entries(l.labels ?? {})) out.set(path("metadata", "labels", k), v);
  for (const [k, v] of Object.entries(l.annotations ?? {}))
    out.set(path("metadata", "annotations", k), v);
  for (const f of l.finalizers ?? [])
    out.set(path("metadata", "finalizers", `v:${JSON.stringify(f)}`), "");
  if (l.type !== undefined) out.set(path("type"), l.type);
  if (l.immutable !== undefined) out.set(path("immutable"), String(l.immutable));
  return out;
}

/** The leaves of a stored Secret. */
export function secretLeaves(s: SecretJSON): Leaves {
  return {
    data: s.data,
    labels: s.metadata.labels,
    annotations: s.metadata.annotations,
    finalizers: s.metadata.finalizers,
    type: s.type,
    immutable: s.immutable,
  };
}

/** Renders paths as a `fieldsV1` tree, with `.` marking each map or list that is itself set. */
function toFieldsV1(paths: Iterable<FieldPath>): FieldsV1 {
  const root: Record<string, Record<string, unknown>> = {};
  for (const p of [...paths].sort()) {
    let node: Record<string, unknown> = root;
    const segs = segments(p);
    segs.forEach((seg, i) => {
      const key = seg.startsWith("v:") ? seg : `f:${seg}`;
      let child = node[key] as Record<string, unknown> | undefined;
      if (child === undefined) {
        child = i < segs.length - 1 && !(segs[0] === "metadata" && i === 0) ? { ".": {} } : {};
        node[key] = child;
      }
      node = child;
    });
  }
  return root as FieldsV1;
}

/** The leaf paths a `fieldsV1` tree names. */
function fromFieldsV1(f: FieldsV1, prefix: string[] = []): Set<FieldPath> {
  const out = new Set<FieldPath>();
  for (const [k, child] of Object.entries(f)) {
    if (k === ".") continue;
    const seg = k.startsWith("f:") ? k.slice(2) : k;
    const childPaths = fromFieldsV1(child, [...prefix, seg]);
    if (childPaths.size === 0) out.add(path(...prefix, seg));
    for (const c of childPaths) out.add(c);
  }
  return out;
}

/** A managedFields entry with its fields as a set, for editing. */
export interface Ownership {
  readonly manager: string;
  readonly operation: "Apply" | "Update";
  readonly time: string;
  readonly fields: Set<FieldPath>;
}

/** Parses managedFields into editable field sets. */
export function ownershipOf(entries: readonly ManagedFieldsEntry[] | undefined): Ownership[] {
  return (entries ?? []).map((e) => ({
    manager: e.manager,
    operation: e.operation,
    time: e.time,
    fields: fromFieldsV1(e.fieldsV1),
  }));
}

/**
 * Renders ownership back to managedFields, dropping empty entries; an entry keeps its old time
 * unless its field set changed.
 */
export function renderOwnership(
  owners: readonly Ownership[],
  before: readonly Ownership[],
  time: string,
): ManagedFieldsEntry[] {
  return owners
    .filter((o) => o.fields.size > 0)
    .map((o) => {
      const old = before.find((b) => b.manager === o.manager && b.operation === o.operation);
      const same =
        old !== undefined &&
        old.fields.size === o.fields.size &&
        [...o.fields].every((f) => old.fields.has(f));
      return {
        manager: o.manager,
        operation: o.operation,
        apiVersion: "v1",
        time: same ? o.time : time,
        fieldsType: "FieldsV1",
        fieldsV1: toFieldsV1(o.fields),
      };
    });
}

/**
 * Ownership after a non-apply write by `manager`: it takes every leaf it added or changed (from
 * every other manager), and removed leaves leave every owner.
 */
export function trackUpdate(
  before: readonly ManagedFieldsEntry[] | undefined,
  oldLeaves: Leaves | undefined,
  newLeaves: Leaves,
  manager: string,
  time: string,
): ManagedFieldsEntry[] {
  const oldF = oldLeaves === undefined ? new Map<FieldPath, string>() : fieldsOf(oldLeaves);
  const newF = fieldsOf(newLeaves);
  const changed = [...newF].filter(([p, v]) => oldF.get(p) !== v).map(([p]) => p);
  const removed = [...oldF.keys()].filter((p) => !newF.has(p));
  const prior = ownershipOf(before);
  const owners = prior.map((o) => ({ ...o, fields: new Set(o.fields) }));
  for (const o of owners) for (const p of [...changed, ...removed]) o.fields.delete(p);
  let mine = owners.find((o) => o.manager === manager && o.operation === "Update");
  if (mine === undefined && changed.length > 0) {
    mine = { manager, operation: "Update", time, fields: new Set() };
    owners.push(mine);
  }
  for (const p of changed) mine?.fields.add(p);
  return renderOwnership(owners, prior, time);
}

/** A leaf path as server-side apply names it in conflicts: `.data.key`, `.metadata.labels.app`. */
export function displayPath(p: FieldPath): string {
  return segments(p)
    .map((s) => (s.startsWith("v:") ? `[value=${JSON.parse(s.slice(2))}]` : `.${s}`))
    .join("");
}
