// A document: the plaintext of a state file's base (document.ts) and of each journal record
// (record.ts): a JSON skeleton, then the byte strings it stands for.
//
//   4 bytes  uint32 big-endian: the skeleton's length j
//   j bytes  the skeleton, UTF-8 JSON, each byte string replaced by its length
//   rest     the byte strings, concatenated in skeleton order; their lengths add up to exactly
//            the rest

import { constants } from "node:buffer";
import type * as z from "zod";
import { err, ok, type Result } from "../result.ts";
import { type StateError, stateError } from "./errors.ts";

const SKELETON_LENGTH_BYTES = 4;
const { MAX_STRING_LENGTH } = constants;
const NOT_BYTES = /[\u0100-\uffff]/;
/** The most parts (values) a slice of the document holds: about 1 ms of writes. */
const SLICE_PARTS = 1_024;

/** A document's length, and its bytes in order. */
export interface PlannedDocument {
  readonly length: number;
  /**
   * The document in slices of at most `sliceBytes`, each in one buffer reused for the next:
   * consumed before the iteration goes on.
   */
  slices(sliceBytes: number): Iterable<Buffer>;
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
