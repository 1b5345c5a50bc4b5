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
import { fromColumns, secretColumnsSchema, toColumns } from "./columns.ts";
import { type StateError, stateError } from "./errors.ts";
import {
  fromRegistryColumns,
  registryColumnsSchema,
  toRegistryColumns,
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
  registry: z.discriminatedUnion("present", [
    z.object({ present: z.literal(false) }),
    z.object({ present: z.literal(true), resourceVersion: version, value: length.nullable() }),
  ]),
  secrets: secretColumnsSchema,
  // Optional both ways: a file without it is checked again (written before ADR 77, or when the
  // value was refused), and a reader from before ADR 77 drops it unread.
  checked: registryColumnsSchema.optional(),
  watches: z.object({
    registry: version,
    secrets: z.array(z.object({ namespace: name.nullable(), resourceVersion: version })),
  }),
});

type Skeleton = z.infer<typeof skeletonSchema>;

const SKELETON_LENGTH_BYTES = 4;
const { MAX_STRING_LENGTH } = constants;
const NOT_BYTES = /[\u0100-\uffff]/;

/** The state's document as bytes. Throws only on a value that is not a byte string (a bug). */
export function encodeState(state: State): Buffer {
  const values: string[] = [];
  const add = (value: string): number => {
    if (NOT_BYTES.test(value)) throw new TypeError("a Secret value is not a byte string");
    values.push(value);
    return value.length;
  };
  const skeleton: Skeleton = {
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
    registry: state.registry.present
      ? {
          present: true,
          resourceVersion: state.registry.resourceVersion,
          value: state.registry.value === null ? null : add(state.registry.value),
        }
      : { present: false },
    secrets: toColumns(state.secrets, add),
    ...(state.checked === undefined ? {} : { checked: toRegistryColumns(state.checked) }),
    watches: {
      registry: state.watches.registry,
      secrets: state.watches.secrets.map((w) => ({ ...w })),
    },
  };
  const json = JSON.stringify(skeleton);
  const jsonBytes = Buffer.byteLength(json, "utf8");
  let total = SKELETON_LENGTH_BYTES + jsonBytes;
  for (const value of values) total += value.length;
  const out = Buffer.allocUnsafe(total);
  out.writeUInt32BE(jsonBytes, 0);
  let at = SKELETON_LENGTH_BYTES + out.write(json, SKELETON_LENGTH_BYTES, "utf8");
  for (const value of values) at += out.write(value, at, "latin1");
  return out;
}

const malformed = (message: string) => err(stateError("malformed", message));

/** The state a document holds, or `malformed` with where it failed (never a value). */
export function decodeState(plaintext: Uint8Array): Result<State, StateError> {
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
  const parsed = skeletonSchema.safeParse(json);
  if (!parsed.success) {
    const [first] = parsed.error.issues;
    const path = first?.path.map(String).join(".") || "(root)";
    return malformed(`its skeleton is invalid: ${first?.code ?? "invalid"} at ${path}`);
  }
  const d = parsed.data;
  const scopes = checkScopes(d.config.secrets.namespaces, d.watches.secrets);
  if (!scopes.ok) return scopes;
  if (bytes.length - end > MAX_STRING_LENGTH)
    return malformed("its values are longer than one string can be");
  const values = new ByteStrings(bytes, end);
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
class ByteStrings {
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
function checkScopes(
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
