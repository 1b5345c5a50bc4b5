// The plaintext of a state file: a JSON skeleton, then the byte strings it stands for.
//
//   4 bytes  uint32 big-endian: the skeleton's length j
//   j bytes  the skeleton, UTF-8 JSON: the state with every byte string replaced by its length,
//            the App Secrets in columns (columns.ts)
//   rest     the byte strings, concatenated in skeleton order (the Registry value, then each
//            Secret's values in column order); their lengths add up to exactly the rest
//
// Raw bytes, not base64 in the JSON: a third smaller, and at 10k Secrets of 1 KiB four times
// quicker both ways (no base64 and no 14 MB JSON text to build and scan). The skeleton is read
// back through zod: the file is the outside world, even authenticated.

import { constants } from "node:buffer";
import * as z from "zod";
import type { ScopePosition } from "../mirror/inputs.ts";
import { err, ok, type Result } from "../result.ts";
import { fromColumns, secretColumnsSchema, toColumns, toColumnsInSlices } from "./columns.ts";
import { type StateError, stateError } from "./errors.ts";
import {
  fromRegistryColumns,
  registryColumnsSchema,
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
  watches: watchesSchema,
});

type Skeleton = z.infer<typeof skeletonSchema>;

const SKELETON_LENGTH_BYTES = 4;
const { MAX_STRING_LENGTH } = constants;
const NOT_BYTES = /[\u0100-\uffff]/;
/** The most parts (values) a slice of the document holds: about 1 ms of writes. */
const SLICE_PARTS = 1_024;

/** The state's document as bytes. Throws only on a value that is not a byte string (a bug). */
export function encodeState(state: State): Buffer {
  const values = new ByteStringsOut();
  const registry = registryOf(state, values);
  const skeleton = skeletonOf(state, registry, toColumns(state.secrets, values.add));
  const checked = state.checked === undefined ? {} : { checked: toRegistryColumns(state.checked) };
  const doc = planned(JSON.stringify({ ...skeleton, ...checked }), values);
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
  await new Promise(setImmediate);
  return planned(
    `${JSON.stringify(rest).slice(0, -1)},"secrets":${secretsJson}${checked}}`,
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

/** A document's length, and its bytes in order. */
export interface PlannedDocument {
  readonly length: number;
  /**
   * The document in slices of at most `sliceBytes`, each in one buffer reused for the next:
   * consumed before the iteration goes on.
   */
  slices(sliceBytes: number): Iterable<Buffer>;
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

/** The document of a skeleton's JSON and the byte strings that follow it. */
export function planned(skeleton: string, values: ByteStringsOut): PlannedDocument {
  const json = Buffer.from(skeleton, "utf8");
  const prefix = Buffer.alloc(SKELETON_LENGTH_BYTES);
  prefix.writeUInt32BE(json.length, 0);
  return {
    length: SKELETON_LENGTH_BYTES + json.length + values.length,
    *slices(sliceBytes) {
      const slice = Buffer.allocUnsafe(sliceBytes);
      let [at, parts] = [0, 0];
      // Each part in pieces that fill the slice: a value longer than the room left is cut. A
      // slice also ends after SLICE_PARTS parts: 26k values of 40 B took 35 ms to write.
      for (const part of [prefix, json, ...values.all]) {
        for (let from = 0; from < part.length; ) {
          const end = Math.min(part.length, from + slice.length - at);
          at +=
            typeof part === "string"
              ? slice.write(end - from === part.length ? part : part.slice(from, end), at, "latin1")
              : part.copy(slice, at, from, end);
          from = end;
          if (from === part.length) parts += 1;
          if (at === slice.length || parts === SLICE_PARTS) {
            yield slice.subarray(0, at);
            [at, parts] = [0, 0];
          }
        }
      }
      if (at > 0) yield slice.subarray(0, at);
    },
  };
}

/** The byte strings of a document, in order: what follows its skeleton. */
export class ByteStringsOut {
  readonly all: string[] = [];
  length = 0;

  readonly add = (value: string): number => {
    if (NOT_BYTES.test(value)) throw new TypeError("a Secret value is not a byte string");
    this.all.push(value);
    this.length += value.length;
    return value.length;
  };
}

const malformed = (message: string) => err(stateError("malformed", message));

/**
 * A document's skeleton checked by `schema`, and its byte strings; `malformed` with where it
 * failed (never a value).
 */
export function openDocument<T>(
  plaintext: Uint8Array,
  schema: z.ZodType<T>,
): Result<{ readonly skeleton: T; readonly values: ByteStrings }, StateError> {
  const bytes = Buffer.from(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength);
  if (bytes.length < SKELETON_LENGTH_BYTES) return malformed("its document has no skeleton");
  const end = SKELETON_LENGTH_BYTES + bytes.readUInt32BE(0);
  if (end > bytes.length) return malformed("its document's skeleton overruns the document");
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8", SKELETON_LENGTH_BYTES, end));
  } catch {
    return malformed(`its ${end - SKELETON_LENGTH_BYTES}-byte skeleton is not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const [first] = parsed.error.issues;
    const path = first?.path.map(String).join(".") || "(root)";
    return malformed(`its skeleton is invalid: ${first?.code ?? "invalid"} at ${path}`);
  }
  if (bytes.length - end > MAX_STRING_LENGTH)
    return malformed("its values are longer than one string can be");
  return ok({ skeleton: parsed.data, values: new ByteStrings(bytes, end) });
}

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
  });
}

/**
 * Consecutive byte strings cut from the bytes after `start`; a length past the end marks it
 * overrun. Each is a slice of one string of all of them (V8 keeps a slice of 13 characters or more
 * as a pointer into its parent, and a parent over 1 MiB outside its heap): one allocation and one
 * copy, not 100k strings copied through the young generation. The parent lives while any slice
 * does: at most the values of one state file, while some value read from it is still served.
 */
export class ByteStrings {
  readonly #all: string;
  #at = 0;
  #overrun = false;

  constructor(bytes: Buffer, start: number) {
    this.#all = bytes.toString("latin1", start);
  }

  take(length: number): string {
    if (this.#at + length > this.#all.length) {
      this.#overrun = true;
      return "";
    }
    const value = this.#all.slice(this.#at, this.#at + length);
    this.#at += length;
    return value;
  }

  exhausted(): boolean {
    return !this.#overrun && this.#at === this.#all.length;
  }
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
