/**
 * Server-side apply for Secrets: the applied configuration's leaves become the manager's, leaves it
 * applied before and no longer lists are removed unless someone else owns them, and changing a leaf
 * another manager owns is a conflict unless `force`.
 */

import type { SecretInput } from "./decode.ts";
import {
  displayPath,
  type FieldPath,
  fieldsOf,
  type Leaves,
  type Ownership,
  ownershipOf,
  renderOwnership,
  secretLeaves,
  segments,
} from "./managed-fields.ts";
import { type ManagedFieldsEntry, type SecretJSON, storeKey, toBase64 } from "./secret.ts";
import { applyConflict, conflict, failWith, type OrStatus, ok } from "./status.ts";
import { type EnvtestState, formatTimestamp } from "./store.ts";
import {
  checkNamespace,
  commitUpdate,
  createSecret,
  nameMismatch,
  type WriteOptions,
  type WriteResult,
} from "./writes.ts";

/**
 * The leaves an applied configuration sets; `stringData` keys count as the `data` keys they become.
 */
function appliedLeaves(input: SecretInput): Leaves {
  return {
    data: { ...input.data, ...toBase64(input.stringData) },
    labels: input.metadata.labels,
    annotations: input.metadata.annotations,
    finalizers: input.metadata.finalizers,
    type: input.type,
    immutable: input.immutable,
  };
}

interface MutableLeaves {
  data: Record<string, string>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  finalizers: string[];
  type: string | undefined;
  immutable: boolean | undefined;
}

function setLeaf(l: MutableLeaves, p: FieldPath, value: string | undefined): void {
  const [a, b, c] = segments(p);
  if (a === "data" && b !== undefined) {
    if (value === undefined) delete l.data[b];
    else l.data[b] = value;
  } else if (a === "metadata" && (b === "labels" || b === "annotations") && c !== undefined) {
    if (value === undefined) delete l[b][c];
    else l[b][c] = value;
  } else if (a === "metadata" && b === "finalizers" && c?.startsWith("v:")) {
    const f = JSON.parse(c.slice(2)) as string;
    l.finalizers = l.finalizers.filter((x) => x !== f);
    if (value !== undefined) l.finalizers.push(f);
  } else if (a === "type") l.type = value;
  else if (a === "immutable") l.immutable = value === undefined ? undefined : value === "true";
}

/**
 * What an apply produces: the Secret's new leaves and the managedFields recording who owns them.
 */
interface ApplyOutcome {
  readonly leaves: Leaves;
  readonly managedFields: ManagedFieldsEntry[];
}

/**
 * Merges `input` applied by `manager` into `current` (undefined: the apply creates). Returns the
 * resulting leaves and managedFields, or the 409 listing every conflict.
 */
function serverSideApply(
  current: SecretJSON | undefined,
  input: SecretInput,
  manager: string,
  force: boolean,
  time: string,
): OrStatus<ApplyOutcome> {
  const applied = fieldsOf(appliedLeaves(input));
  const prior = ownershipOf(current?.metadata.managedFields);
  const owners: Ownership[] = prior.map((o) => ({ ...o, fields: new Set(o.fields) }));
  const currentF =
    current === undefined ? new Map<FieldPath, string>() : fieldsOf(secretLeaves(current));
  const isMine = (o: Ownership) => o.manager === manager && o.operation === "Apply";

  const conflicts: { manager: string; field: string }[] = [];
  for (const [p, v] of applied) {
    if (currentF.get(p) === v) continue;
    for (const o of owners) {
      if (o.manager === manager || !o.fields.has(p)) continue;
      if (force) o.fields.delete(p);
      else conflicts.push({ manager: o.manager, field: displayPath(p) });
    }
  }
  if (conflicts.length > 0) return failWith(applyConflict(conflicts));

  const l: MutableLeaves = {
    data: { ...current?.data },
    labels: { ...current?.metadata.labels },
    annotations: { ...current?.metadata.annotations },
    finalizers: [...(current?.metadata.finalizers ?? [])],
    type: current?.type,
    immutable: current?.immutable,
  };
  let mine = owners.find(isMine);
  for (const p of mine?.fields ?? []) {
    if (applied.has(p)) continue;
    if (!owners.some((o) => !isMine(o) && o.fields.has(p))) setLeaf(l, p, undefined);
  }
  for (const [p, v] of applied) setLeaf(l, p, v);
  if (mine === undefined) {
    mine = { manager, operation: "Apply", time, fields: new Set() };
    owners.push(mine);
  }
  mine.fields.clear();
  for (const p of applied.keys()) mine.fields.add(p);
  return ok({
    leaves: { ...l, type: l.type },
    managedFields: renderOwnership(owners, prior, time),
  });
}

/**
 * PATCH with `application/apply-patch+yaml`: creates or merges `input` as `opts.manager`'s applied
 * configuration.
 */
export function applySecret(
  state: EnvtestState,
  namespace: string,
  name: string,
  input: SecretInput,
  opts: WriteOptions & { force: boolean },
): OrStatus<WriteResult> {
  if ((input.metadata.name ?? "") !== name)
    return failWith(nameMismatch(input.metadata.name, name));
  const nsError = checkNamespace(input, namespace);
  if (nsError !== undefined) return failWith(nsError);
  const existing = state.get(storeKey(namespace, name));
  const time = formatTimestamp(state.now());
  const merged = serverSideApply(existing?.obj, input, opts.manager, opts.force, time);
  if (!merged.ok) return merged;
  if (existing === undefined) {
    const { data, labels, annotations, finalizers, type, immutable } = merged.value.leaves;
    return createSecret(
      state,
      namespace,
      {
        metadata: {
          name,
          labels,
          annotations,
          finalizers,
          managedFields: merged.value.managedFields,
        },
        data,
        type,
        immutable,
      },
      opts,
    );
  }
  const cur = existing.obj;
  const rv = input.metadata.resourceVersion;
  if (rv !== undefined && rv !== "" && rv !== cur.metadata.resourceVersion)
    return failWith(conflict("secrets", name));
  return commitUpdate(
    state,
    cur,
    {
      leaves: merged.value.leaves,
      generateName: cur.metadata.generateName,
      ownerReferences: cur.metadata.ownerReferences,
    },
    merged.value.managedFields,
    opts,
  );
}
