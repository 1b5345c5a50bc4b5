/**
 * Create and update of Secrets with the API server's semantics: validation before storage,
 * optimistic concurrency on resourceVersion, no-op updates that write nothing, dry runs, and field
 * ownership kept in managedFields. The HTTP handlers, PATCH, server-side apply and the programmatic
 * API all write through here.
 */
import { randomUUID } from "node:crypto";
import type { SecretInput } from "./decode.ts";
import { type Leaves, secretLeaves, trackUpdate } from "./managed-fields.ts";
import {
  buildSecret,
  type ManagedFieldsEntry,
  type SecretJSON,
  StoredSecret,
  storeKey,
  toBase64,
} from "./secret.ts";
import {
  alreadyExists,
  badRequest,
  conflict,
  failWith,
  notFound,
  type OrStatus,
  ok,
  type StatusFailure,
} from "./status.ts";
import { type EnvtestState, formatTimestamp } from "./store.ts";
import { invalidSecret, validateSecret, validateSecretUpdate } from "./validation.ts";

/** Options every write takes. */
export interface WriteOptions {
  /** The field manager recorded in managedFields. */
  readonly manager: string;
  /** `dryRun=All`: validate and answer, store nothing. */
  readonly dryRun?: boolean;
}

/** A successful write. */
export interface WriteResult {
  readonly obj: SecretJSON;
  /** The object with its serialisation, shared with the watch event (no second JSON.stringify). */
  readonly stored: StoredSecret;
  /** Whether the write created the object (201 rather than 200). */
  readonly created: boolean;
}

const GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
function generatedSuffix(): string {
  return Array.from(
    { length: 5 },
    () => GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)],
  ).join("");
}

/**
 * The leaves an input sets once `stringData` is merged into `data`, as the v1 → internal conversion
 * does.
 */
function inputLeaves(input: SecretInput): Leaves {
  return {
    data:
      input.data === undefined && input.stringData === undefined
        ? undefined
        : { ...input.data, ...toBase64(input.stringData) },
    labels: input.metadata.labels,
    annotations: input.metadata.annotations,
    finalizers: input.metadata.finalizers,
    type: input.type,
    immutable: input.immutable,
  };
}

/** The 400 for a body whose namespace is not the URL's (an empty one is filled in). */
export function checkNamespace(input: SecretInput, namespace: string): StatusFailure | undefined {
  return input.metadata.namespace && input.metadata.namespace !== namespace
    ? badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      )
    : undefined;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k, i) => k === kb[i] && deepEqual(ra[k], rb[k]));
}

function sameManagedFields(
  a: readonly ManagedFieldsEntry[] | undefined,
  b: readonly ManagedFieldsEntry[] | undefined,
) {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

/**
 * Equal apart from resourceVersion: such an update writes nothing, as etcd3's GuaranteedUpdate
 * skips it.
 */
function unchanged(a: SecretJSON, b: SecretJSON): boolean {
  return (
    deepEqual({ ...a.metadata, resourceVersion: "" }, { ...b.metadata, resourceVersion: "" }) &&
    a.immutable === b.immutable &&
    a.type === b.type &&
    deepEqual(a.data, b.data)
  );
}

/** Stores `candidate`, built for the next resourceVersion, and returns what the store announced. */
function commit(
  state: EnvtestState,
  key: string,
  candidate: SecretJSON,
  draft: (rv: number) => SecretJSON,
  created: boolean,
): WriteResult {
  const next = String(state.resourceVersion + 1);
  const event = state.put(key, (rv) => (String(rv) === next ? candidate : draft(rv)));
  const stored = event.current ?? new StoredSecret(candidate);
  return { obj: stored.obj, created, stored };
}

/** POST: creates the Secret `input` describes in `namespace`. */
export function createSecret(
  state: EnvtestState,
  namespace: string,
  input: SecretInput,
  opts: WriteOptions,
): OrStatus<WriteResult> {
  const nsError = checkNamespace(input, namespace);
  if (nsError !== undefined) return failWith(nsError);
  const generate = input.metadata.generateName;
  let name = input.metadata.name ?? "";
  if (name === "" && generate) {
    do name = `${generate}${generatedSuffix()}`;
    while (state.get(storeKey(namespace, name)) !== undefined);
  }
  const time = formatTimestamp(state.now());
  const leaves = inputLeaves(input);
  const given = input.metadata.managedFields;
  const draft = (rv: number) =>
    buildSecret({
      ...leaves,
      name,
      generateName: generate,
      namespace,
      uid: randomUUID(),
      resourceVersion: String(rv),
      creationTimestamp: time,
      ownerReferences: input.metadata.ownerReferences,
      managedFields:
        given && given.length > 0
          ? given
          : trackUpdate(undefined, undefined, leaves, opts.manager, time),
    });
  const candidate = draft(state.resourceVersion + 1);
  const errors = validateSecret(candidate);
  if (errors.length > 0) return failWith(invalidSecret(name, errors));
  const key = storeKey(namespace, name);
  if (state.get(key) !== undefined) return failWith(alreadyExists("secrets", name));
  if (opts.dryRun)
    return ok({ obj: candidate, created: true, stored: new StoredSecret(candidate) });
  return ok(commit(state, key, candidate, draft, true));
}

/**
 * Writes `leaves` over the existing Secret: the shared tail of PUT, PATCH and apply.
 * `managedFields` undefined means "track this write as an Update by opts.manager".
 */
export function commitUpdate(
  state: EnvtestState,
  current: SecretJSON,
  next: {
    leaves: Leaves;
    generateName?: string | undefined;
    ownerReferences?: readonly unknown[] | undefined;
  },
  managedFields: readonly ManagedFieldsEntry[] | undefined,
  opts: WriteOptions,
): OrStatus<WriteResult> {
  const time = formatTimestamp(state.now());
  const m = current.metadata;
  const draft = (rv: number) =>
    buildSecret({
      ...next.leaves,
      name: m.name,
      generateName: next.generateName,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: String(rv),
      creationTimestamp: m.creationTimestamp,
      ownerReferences: next.ownerReferences,
      managedFields:
        managedFields ??
        trackUpdate(m.managedFields, secretLeaves(current), next.leaves, opts.manager, time),
    });
  const candidate = draft(state.resourceVersion + 1);
  const errors = validateSecretUpdate(candidate, current);
  if (errors.length > 0) return failWith(invalidSecret(m.name, errors));
  const key = storeKey(m.namespace, m.name);
  if (unchanged(candidate, current)) {
    const stored = state.get(key) ?? new StoredSecret(current);
    return ok({ obj: stored.obj, created: false, stored });
  }
  if (opts.dryRun)
    return ok({ obj: candidate, created: false, stored: new StoredSecret(candidate) });
  return ok(commit(state, key, candidate, draft, false));
}

/** The 400 for a body whose name is not the URL's. */
export function nameMismatch(given: string | undefined, name: string): StatusFailure {
  return badRequest(
    `the name of the object (${given ?? ""}) does not match the name on the URL (${name})`,
  );
}

/**
 * PUT (and the tail of every non-apply PATCH): replaces the Secret, refusing a stale
 * resourceVersion.
 */
export function updateSecret(
  state: EnvtestState,
  namespace: string,
  name: string,
  input: SecretInput,
  opts: WriteOptions,
): OrStatus<WriteResult> {
  const existing = state.get(storeKey(namespace, name));
  if (existing === undefined) return failWith(notFound("secrets", name));
  const nsError = checkNamespace(input, namespace);
  if (nsError !== undefined) return failWith(nsError);
  if ((input.metadata.name ?? "") !== name)
    return failWith(nameMismatch(input.metadata.name, name));
  const current = existing.obj;
  const rv = input.metadata.resourceVersion;
  if (rv !== undefined && rv !== "" && rv !== current.metadata.resourceVersion)
    return failWith(conflict("secrets", name));
  const given = input.metadata.managedFields;
  const reset = given !== undefined && !sameManagedFields(given, current.metadata.managedFields);
  return commitUpdate(
    state,
    current,
    {
      leaves: inputLeaves(input),
      generateName: input.metadata.generateName,
      ownerReferences: input.metadata.ownerReferences,
    },
    reset ? given : undefined,
    opts,
  );
}
