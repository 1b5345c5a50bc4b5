// One journal record's plaintext (ADR 79): a document as the state's (document.ts), whose
// skeleton holds what changed since the record before it, and the rest whole where it is small.
//
//   savedAt, generation, watches  as the state's: the record's own
//   registry                      the Registry Secret, when it changed (its value the first bytes)
//   checked                       the Registry's check, when it changed; null: none any more
//   kept                          the Registry kept beside a refused value (ADR 91), when it
//                                 changed; null: none any more
//   certificates                  the last good certificates kept beside refused ones (ADR 92),
//                                 when they changed; null: none any more
//   set                           App Secrets added or changed, in columns (columns.ts)
//   removed                       App Secrets no longer present: [namespace, name] pairs
//
// Removals apply before the record's sets.

import * as z from "zod";
import type {
  AppSecret,
  CheckedRegistry,
  KeptRegistry,
  RegistrySecret,
  WatchPositions,
} from "../mirror/inputs.ts";
import { err, ok, type Result } from "../result.ts";
import type { SecretKey, StateChanges } from "./changes.ts";
import { fromColumns, secretColumnsSchema, toColumns } from "./columns.ts";
import {
  checkScopes,
  generationSchema,
  objectJsonInTurns,
  registryOf,
  registrySchema,
  watchesSchema,
} from "./document.ts";
import { ByteStringsOut, openDocument, planned } from "./document-bytes.ts";
import { type StateError, stateError } from "./errors.ts";
import {
  fromKeptCertificates,
  keptCertificatesSchema,
  toKeptCertificates,
} from "./kept-certificates.ts";
import {
  fromKeptColumns,
  fromRegistryColumns,
  keptColumnsSchema,
  registryColumnsSchema,
  toKeptColumnsInSlices,
  toRegistryColumnsInSlices,
} from "./registry-columns.ts";
import type { Generation, State, StateConfig } from "./state.ts";

const name = z.string().min(1);

const recordSchema = z.object({
  savedAt: z.number().int().nonnegative(),
  generation: generationSchema,
  watches: watchesSchema,
  registry: registrySchema.optional(),
  checked: registryColumnsSchema.nullable().optional(),
  kept: keptColumnsSchema.nullable().optional(),
  certificates: keptCertificatesSchema.nullable().optional(),
  set: secretColumnsSchema,
  removed: z.array(z.tuple([name, name])),
});

/** A record as read back: the changes, and the record's own time, generation and positions. */
export interface JournalRecord extends StateChanges {
  readonly savedAt: number;
  readonly generation: Generation;
  readonly watches: WatchPositions;
}

/** The plaintext of the record that takes a state to `state` by `changes`. */
export async function encodeRecord(changes: StateChanges, state: State): Promise<Buffer> {
  const values = new ByteStringsOut();
  const changed = changes.registry;
  const registry =
    changed === undefined ? {} : { registry: registryOf({ registry: changed }, values) };
  const set = toColumns(changes.set, values.add);
  const removed = changes.removed.map((k) => [k.namespace, k.name]);
  const certificates =
    changes.certificates === undefined
      ? {}
      : {
          certificates:
            changes.certificates === null ? null : toKeptCertificates(changes.certificates),
        };
  const head = JSON.stringify({
    savedAt: state.savedAt,
    generation: state.generation,
    watches: state.watches,
    ...registry,
    ...certificates,
    set,
    removed,
  });
  const checked =
    changes.checked === undefined
      ? ""
      : `,"checked":${changes.checked === null ? "null" : await objectJsonInTurns(await toRegistryColumnsInSlices(changes.checked))}`;
  const kept =
    changes.kept === undefined
      ? ""
      : `,"kept":${changes.kept === null ? "null" : await objectJsonInTurns(await toKeptColumnsInSlices(changes.kept))}`;
  const doc = planned(`${head.slice(0, -1)}${checked}${kept}}`, values);
  const out = Buffer.allocUnsafe(doc.length);
  let at = 0;
  for (const slice of doc.slices(out.length)) at += slice.copy(out, at);
  return out;
}

const malformed = (message: string): Result<never, StateError> =>
  err(stateError("malformed", message));

/** The record a plaintext holds, checked against the scopes of `config`; else `malformed`. */
export function decodeRecord(
  plaintext: Uint8Array,
  config: StateConfig,
): Result<JournalRecord, StateError> {
  const opened = openDocument(plaintext, recordSchema);
  if (!opened.ok) return opened;
  const { skeleton: d, values } = opened.value;
  const scopes = checkScopes(config.secrets.namespaces, d.watches.secrets);
  if (!scopes.ok) return scopes;
  let registry: { registry?: RegistrySecret } = {};
  if (d.registry !== undefined)
    registry = {
      registry: d.registry.present
        ? {
            present: true,
            resourceVersion: d.registry.resourceVersion,
            value: d.registry.value === null ? null : values.take(d.registry.value),
          }
        : { present: false },
    };
  const set = fromColumns(d.set, (length) => values.take(length));
  if (!set.ok) return malformed(`its App Secrets disagree: ${set.error}`);
  if (!values.exhausted())
    return malformed("its value lengths do not add up to the bytes that follow the skeleton");
  let checked: { checked?: CheckedRegistry | null } = {};
  if (d.checked === null) checked = { checked: null };
  else if (d.checked !== undefined) {
    const c = fromRegistryColumns(d.checked);
    if (!c.ok) return malformed(`its checked Registry disagrees: ${c.error}`);
    checked = { checked: c.value };
  }
  let kept: { kept?: KeptRegistry | null } = {};
  if (d.kept === null) kept = { kept: null };
  else if (d.kept !== undefined) {
    const k = fromKeptColumns(d.kept);
    if (!k.ok) return malformed(`its kept Registry disagrees: ${k.error}`);
    kept = { kept: k.value };
  }
  const certificates =
    d.certificates === undefined
      ? {}
      : {
          certificates: d.certificates === null ? null : fromKeptCertificates(d.certificates),
        };
  const removed: SecretKey[] = d.removed.map(([namespace, name]) => ({ namespace, name }));
  return ok({
    savedAt: d.savedAt,
    generation: d.generation,
    watches: d.watches,
    set: set.value satisfies AppSecret[],
    removed,
    ...registry,
    ...checked,
    ...kept,
    ...certificates,
  });
}
