// The plaintext of a state file's base: a document (document-bytes.ts) whose skeleton is the
// state with every byte string replaced by its length, the App Secrets in columns (columns.ts);
// its byte strings are the Registry value, then each Secret's values in column order.
//
// Raw bytes, not base64 in the JSON: a third smaller, and at 10k Secrets of 1 KiB four times
// quicker both ways (no base64 and no 14 MB JSON text to build and scan). The skeleton is read
// back through zod: the file is the outside world, even authenticated.

import * as z from "zod";
import type { ScopePosition } from "../mirror/inputs.ts";
import { err, ok, type Result } from "../result.ts";
import { fromColumns, secretColumnsSchema, toColumns, toColumnsInSlices } from "./columns.ts";
import { ByteStringsOut, openDocument, type PlannedDocument, planned } from "./document-bytes.ts";
import { type StateError, stateError } from "./errors.ts";
import {
  fromKeptCertificates,
  type KeptCertificatesSkeleton,
  keptCertificatesSchema,
  toKeptCertificates,
} from "./kept-certificates.ts";
import {
  fromKeptColumns,
  fromRegistryColumns,
  keptColumnsSchema,
  registryColumnsSchema,
  toKeptColumns,
  toKeptColumnsInSlices,
  toRegistryColumns,
  toRegistryColumnsInSlices,
} from "./registry-columns.ts";
import { FORMAT_VERSION } from "./seal.ts";
import type { State } from "./state.ts";

const name = z.string().min(1);
const version = z.string().min(1);
const length = z.number().int().nonnegative();

/** A state's generation, as the state file and the high-water mark both hold it. */
export const generationSchema = z.object({
  series: z.string().regex(/^[0-9a-f]{16}$/),
  writes: z.number().int().positive(),
  heardAt: z.number().int().nonnegative().nullable(),
});

/** The Registry Secret as a skeleton holds it: its value is a length, its bytes follow. */
export const registrySchema = z.discriminatedUnion("present", [
  z.object({ present: z.literal(false) }),
  z.object({ present: z.literal(true), resourceVersion: version, value: length.nullable() }),
]);

export const watchesSchema = z.object({
  registry: version,
  secrets: z.array(z.object({ namespace: name.nullable(), resourceVersion: version })),
});

// No transforms: zod compiles a schema without them into one fast function.
const skeletonSchema = z.object({
  format: z.literal(FORMAT_VERSION),
  savedAt: z.number().int().nonnegative(),
  generation: generationSchema,
  config: z.object({
    registry: z.object({ namespace: name, name, key: name }),
    secrets: z.object({
      namespaces: z.array(name).min(1).nullable(),
      labelSelector: z.string().nullable(),
    }),
    served: z.object({ credentials: z.boolean(), certificates: z.boolean() }),
  }),
  registry: registrySchema,
  secrets: secretColumnsSchema,
  // Optional both ways: a file without it is checked again (written before ADR 77, or when the
  // value was refused), and a reader from before ADR 77 drops it unread.
  checked: registryColumnsSchema.optional(),
  // Only beside a refused value (ADR 91); a reader from before it drops it unread.
  kept: keptColumnsSchema.optional(),
  // Only beside refused certificates (ADR 92), as `kept`.
  certificates: keptCertificatesSchema.optional(),
  watches: watchesSchema,
});

type Skeleton = z.infer<typeof skeletonSchema>;

/** The state's document as bytes. Throws only on a value that is not a byte string (a bug). */
export function encodeState(state: State): Buffer {
  const values = new ByteStringsOut();
  const registry = registryOf(state, values);
  const skeleton = skeletonOf(state, registry, toColumns(state.secrets, values.add));
  const checked = state.checked === undefined ? {} : { checked: toRegistryColumns(state.checked) };
  const kept = state.kept === undefined ? {} : { kept: toKeptColumns(state.kept) };
  const doc = planned(
    JSON.stringify({ ...skeleton, ...checked, ...kept, ...certificatesOf(state) }),
    values,
  );
  const out = Buffer.allocUnsafe(doc.length);
  let at = 0;
  for (const slice of doc.slices(out.length)) at += slice.copy(out, at);
  return out;
}

/**
 * The state's document planned: its length, then its bytes a slice at a time. The App Secrets'
 * columns (their sort included) give the event loop a turn every few thousand Secrets, so a state
 * write never holds the main thread more than a few ms (ADR 78). Throws only on a value that is
 * not a byte string (a bug).
 */
export async function planState(state: State): Promise<PlannedDocument> {
  const values = new ByteStringsOut();
  const registry = registryOf(state, values);
  const secrets = await toColumnsInSlices(state.secrets, values.add);
  const { secrets: columns, ...rest } = skeletonOf(state, registry, secrets);
  const secretsJson = await objectJsonInTurns(columns);
  const checked =
    state.checked === undefined
      ? ""
      : `,"checked":${await objectJsonInTurns(await toRegistryColumnsInSlices(state.checked))}`;
  const kept =
    state.kept === undefined
      ? ""
      : `,"kept":${await objectJsonInTurns(await toKeptColumnsInSlices(state.kept))}`;
  const certificates = JSON.stringify(certificatesOf(state)).slice(1, -1);
  await new Promise(setImmediate);
  return planned(
    `${JSON.stringify(rest).slice(0, -1)},"secrets":${secretsJson}${checked}${kept}${certificates === "" ? "" : `,${certificates}`}}`,
    values,
  );
}

/**
 * The JSON of an object of columns, a column a turn: 4 MB of App Secret columns at 100k Secrets
 * took 8 ms in one call.
 */
export async function objectJsonInTurns(columns: object): Promise<string> {
  const fields: string[] = [];
  for (const [name, column] of Object.entries(columns)) {
    await new Promise(setImmediate);
    fields.push(`${JSON.stringify(name)}:${JSON.stringify(column)}`);
  }
  return `{${fields.join(",")}}`;
}

/** The skeleton's field of the kept certificates, when there are any. */
function certificatesOf(state: Pick<State, "certificates">): {
  certificates?: KeptCertificatesSkeleton;
} {
  const kept = state.certificates;
  return kept === undefined || kept.length === 0 ? {} : { certificates: toKeptCertificates(kept) };
}

/** The Registry as the skeleton holds it; its value, the first byte string, goes to `values`. */
export function registryOf(
  { registry }: Pick<State, "registry">,
  values: ByteStringsOut,
): Skeleton["registry"] {
  if (!registry.present) return { present: false };
  const value = registry.value === null ? null : values.add(registry.value);
  return { present: true, resourceVersion: registry.resourceVersion, value };
}

function skeletonOf(
  state: State,
  registry: Skeleton["registry"],
  secrets: Skeleton["secrets"],
): Skeleton {
  return {
    format: FORMAT_VERSION,
    savedAt: state.savedAt,
    generation: { ...state.generation },
    config: {
      registry: { ...state.config.registry },
      secrets: {
        namespaces: state.config.secrets.namespaces && [...state.config.secrets.namespaces],
        labelSelector: state.config.secrets.labelSelector,
      },
      served: { ...state.config.served },
    },
    registry,
    secrets,
    watches: {
      registry: state.watches.registry,
      secrets: state.watches.secrets.map((w) => ({ ...w })),
    },
  };
}

const malformed = (message: string) => err(stateError("malformed", message));

/** The state a document holds, or `malformed` with where it failed (never a value). */
export function decodeState(plaintext: Uint8Array): Result<State, StateError> {
  const opened = openDocument(plaintext, skeletonSchema);
  if (!opened.ok) return opened;
  const { skeleton: d, values } = opened.value;
  const scopes = checkScopes(d.config.secrets.namespaces, d.watches.secrets);
  if (!scopes.ok) return scopes;
  const registryValue =
    d.registry.present && d.registry.value !== null ? values.take(d.registry.value) : null;
  const secrets = fromColumns(d.secrets, (length) => values.take(length));
  if (!secrets.ok) return malformed(`its skeleton's App Secrets disagree: ${secrets.error}`);
  if (!values.exhausted())
    return malformed("its value lengths do not add up to the bytes that follow the skeleton");
  const checked = d.checked === undefined ? undefined : fromRegistryColumns(d.checked);
  if (checked?.ok === false)
    return malformed(`its skeleton's checked Registry disagrees: ${checked.error}`);
  const kept = d.kept === undefined ? undefined : fromKeptColumns(d.kept);
  if (kept?.ok === false) return malformed(`its skeleton's kept Registry disagrees: ${kept.error}`);
  return ok({
    savedAt: d.savedAt,
    generation: d.generation,
    config: d.config,
    registry: d.registry.present
      ? { present: true, resourceVersion: d.registry.resourceVersion, value: registryValue }
      : { present: false },
    secrets: secrets.value,
    watches: d.watches,
    ...(checked === undefined ? {} : { checked: checked.value }),
    ...(kept === undefined ? {} : { kept: kept.value }),
    ...(d.certificates === undefined ? {} : { certificates: fromKeptCertificates(d.certificates) }),
  });
}

/** One watch version per configured scope, no more: the scopes a state's watches resume. */
export function checkScopes(
  namespaces: readonly string[] | null,
  watches: readonly ScopePosition[],
): Result<void, StateError> {
  const configured: readonly (string | null)[] = namespaces ?? [null];
  const watched = watches.map((w) => w.namespace);
  const same =
    watched.length === configured.length &&
    new Set(watched).size === watched.length &&
    watched.every((ns) => configured.includes(ns));
  return same
    ? ok(undefined)
    : malformed("its watch versions do not match its App Secret scopes one to one");
}
