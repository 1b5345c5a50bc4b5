// The state file's envelope: AES-256-GCM under the state key, behind a header it authenticates.
// The high-water mark beside the file (mark.ts) has the same envelope under its own magic, so
// neither can stand in for the other.
//
//   offset  size  field
//        0     8  magic "RMSTATE\0" (the high-water mark: "RMSTMARK")
//        8     2  format version, big-endian (FORMAT_VERSION)
//       10     8  key id (StateKey.id): a foreign key is told apart from a corrupt file
//       18    12  IV, random per write
//       30     4  ciphertext length n, big-endian: a truncated file is told apart from a corrupt one
//       34     n  ciphertext
//     34+n    16  GCM tag
//
// The 34 header bytes are the additional authenticated data: none of them can be changed unseen.

import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { err, ok, type Result } from "../result.ts";
import { type StateError, stateError } from "./errors.ts";
import type { StateKey } from "./key.ts";

export const MAGIC = Buffer.from("RMSTATE\0", "latin1");
export const MARK_MAGIC = Buffer.from("RMSTMARK", "latin1");
/** 2: the state carries its generation, and a high-water mark is written beside it (ADR 50). */
export const FORMAT_VERSION = 2;

const VERSION_AT = 8;
const KEY_ID_AT = 10;
const IV_AT = 18;
const LENGTH_AT = 30;
export const HEADER_BYTES = 34;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const MAX_CIPHERTEXT = 0xffff_ffff;

/** A fresh IV: random, because a counter would need state that survives restarts. */
const randomIv = (): Buffer => randomBytes(IV_BYTES);

/** The sealed file for `plaintext`: header (a state's magic unless told), ciphertext, tag. */
export function seal(
  plaintext: Uint8Array,
  key: StateKey,
  iv: Buffer = randomIv(),
  magic: Buffer = MAGIC,
): Buffer {
  if (iv.length !== IV_BYTES) throw new RangeError(`an IV is ${IV_BYTES} bytes`);
  if (plaintext.length > MAX_CIPHERTEXT) throw new RangeError("a state is at most 4 GiB");
  const header = Buffer.alloc(HEADER_BYTES);
  magic.copy(header, 0);
  header.writeUInt16BE(FORMAT_VERSION, VERSION_AT);
  header.write(key.id, KEY_ID_AT, "hex");
  iv.copy(header, IV_AT);
  header.writeUInt32BE(plaintext.length, LENGTH_AT);
  const cipher = createCipheriv("aes-256-gcm", key.bytes(), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(header);
  const body = cipher.update(plaintext);
  const final = cipher.final();
  return Buffer.concat([header, body, final, cipher.getAuthTag()]);
}

/**
 * The plaintext of a sealed file that starts with `magic` (a state's unless told), or which check
 * it failed: truncated, not a state file (or not a mark), old or future version, foreign key,
 * corrupt (authentication failed).
 */
export function unseal(
  file: Uint8Array,
  key: StateKey,
  magic: Buffer = MAGIC,
): Result<Buffer, StateError> {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const start = bytes.subarray(0, magic.length);
  if (!start.equals(magic.subarray(0, start.length)))
    return err(
      stateError(
        "not-a-state-file",
        `does not start with ${magic === MAGIC ? "the state file's" : "a high-water mark's"} magic bytes`,
      ),
    );
  if (bytes.length < HEADER_BYTES)
    return err(
      stateError(
        "truncated",
        `holds ${bytes.length} bytes, less than the ${HEADER_BYTES}-byte header`,
      ),
    );
  const version = bytes.readUInt16BE(VERSION_AT);
  if (version > FORMAT_VERSION)
    return err(
      stateError("future-version", `format version ${version}, newer than ${FORMAT_VERSION}`),
    );
  if (version < FORMAT_VERSION)
    return err(
      stateError("old-version", `format version ${version}, older than ${FORMAT_VERSION}`),
    );
  const keyId = bytes.toString("hex", KEY_ID_AT, IV_AT);
  if (keyId !== key.id)
    return err(stateError("foreign-key", `sealed under key ${keyId}, not this key ${key.id}`));
  const length = bytes.readUInt32BE(LENGTH_AT);
  const expected = HEADER_BYTES + length + TAG_BYTES;
  if (bytes.length < expected)
    return err(
      stateError("truncated", `holds ${bytes.length} bytes, its header announces ${expected}`),
    );
  if (bytes.length > expected)
    return err(
      stateError("corrupt", `holds ${bytes.length} bytes, its header announces ${expected}`),
    );
  const decipher = createDecipheriv(
    "aes-256-gcm",
    key.bytes(),
    bytes.subarray(IV_AT, IV_AT + IV_BYTES),
    { authTagLength: TAG_BYTES },
  );
  decipher.setAAD(bytes.subarray(0, HEADER_BYTES));
  decipher.setAuthTag(bytes.subarray(expected - TAG_BYTES));
  const body = decipher.update(bytes.subarray(HEADER_BYTES, expected - TAG_BYTES));
  try {
    return ok(Buffer.concat([body, decipher.final()]));
  } catch {
    // final() throws exactly when the tag does not authenticate header and ciphertext.
    return err(stateError("corrupt", "does not authenticate under this key: altered or damaged"));
  }
}
