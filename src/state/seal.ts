// The state file's envelope: AES-256-GCM under the state key, behind a header it authenticates.
// The high-water mark beside the file (mark.ts) and each journal record appended to the file
// (journal.ts) have the same envelope under their own magic, so none can stand in for another.
//
//   offset  size  field
//        0     8  magic "RMSTATE\0" (the high-water mark: "RMSTMARK", a record: "RMSTJREC")
//        8     2  format version, big-endian (FORMAT_VERSION; a mark's: MARK_FORMAT_VERSION)
//       10     8  key id (StateKey.id): a foreign key is told apart from a corrupt file
//       18    12  IV, random per write
//       30     4  ciphertext length n, big-endian: a truncated file is told apart from a corrupt one
//       34     n  ciphertext
//     34+n    16  GCM tag
//
// The 34 header bytes are the additional authenticated data: none of them can be changed unseen.
// A journal record's also binds where it belongs (`bound`, not stored): its base and its index.

import { type CipherGCM, createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { err, ok, type Result } from "../result.ts";
import { type StateError, stateError } from "./errors.ts";
import type { StateKey } from "./key.ts";

export const MAGIC = Buffer.from("RMSTATE\0", "latin1");
export const MARK_MAGIC = Buffer.from("RMSTMARK", "latin1");
export const RECORD_MAGIC = Buffer.from("RMSTJREC", "latin1");
/**
 * 2: the state carries its generation, and a high-water mark is written beside it (ADR 50).
 * 3: the App Secrets in columns, sorted (ADR 66); a value kept for its presence only has no
 * bytes, and the state names the flags that say which are kept (ADR 68).
 * 4: journal records may follow the state in its file (ADR 79).
 */
export const FORMAT_VERSION = 4;
/** The high-water mark's own version: unchanged by format 3, so an upgrade keeps the pod's mark. */
export const MARK_FORMAT_VERSION = 2;

const VERSION_AT = 8;
const KEY_ID_AT = 10;
const IV_AT = 18;
const LENGTH_AT = 30;
export const HEADER_BYTES = 34;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
const MAX_CIPHERTEXT = 0xffff_ffff;
/**
 * The cipher's slice: its output is allocated per slice, so slices keep the allocations small and
 * reused, and the plaintext of a whole file never exists twice (a 109 MiB state decrypted in one
 * update took 4x as long: fresh pages for the output, then a copy).
 */
const SLICE_BYTES = 1 << 20;

const versionFor = (magic: Buffer): number =>
  magic.equals(MARK_MAGIC) ? MARK_FORMAT_VERSION : FORMAT_VERSION;

/** Runs `bytes` through `cipher` a slice at a time, writing its output at `out`[at...]. */
function streamInto(
  cipher: { update(data: Uint8Array): Buffer },
  bytes: Uint8Array,
  out: Buffer,
  at: number,
): number {
  let written = at;
  for (let from = 0; from < bytes.length; from += SLICE_BYTES)
    written += cipher.update(bytes.subarray(from, from + SLICE_BYTES)).copy(out, written);
  return written;
}

/** A fresh IV: random, because a counter would need state that survives restarts. */
const randomIv = (): Buffer => randomBytes(IV_BYTES);

/** The IV in a sealed file's header: random per write, so it also names that write. */
export const ivOf = (header: Uint8Array): Buffer =>
  Buffer.from(header.subarray(IV_AT, IV_AT + IV_BYTES));

/**
 * The whole length of the sealed file that starts `bytes`, as its header announces; null when
 * the header itself is not all there.
 */
export function sealedLength(bytes: Uint8Array): number | null {
  if (bytes.length < HEADER_BYTES) return null;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return HEADER_BYTES + view.readUInt32BE(LENGTH_AT) + TAG_BYTES;
}

const aad = (header: Buffer, bound: Uint8Array | undefined): Buffer =>
  bound === undefined ? header : Buffer.concat([header, bound]);

/**
 * A sealed file written as it is encrypted: the header (which announces `length`), then each
 * slice's ciphertext as the plaintext comes, then the tag. What a state write streams to its file
 * (ADR 78), so that the plaintext and the file never exist whole.
 */
export class Sealer {
  readonly header: Buffer;
  readonly #cipher: CipherGCM;
  #remaining: number;

  constructor(
    length: number,
    key: StateKey,
    iv: Buffer = randomIv(),
    magic: Buffer = MAGIC,
    bound?: Uint8Array,
  ) {
    if (iv.length !== IV_BYTES) throw new RangeError(`an IV is ${IV_BYTES} bytes`);
    if (length > MAX_CIPHERTEXT) throw new RangeError("a state is at most 4 GiB");
    const header = Buffer.alloc(HEADER_BYTES);
    magic.copy(header, 0);
    header.writeUInt16BE(versionFor(magic), VERSION_AT);
    header.write(key.id, KEY_ID_AT, "hex");
    iv.copy(header, IV_AT);
    header.writeUInt32BE(length, LENGTH_AT);
    this.header = header;
    this.#cipher = createCipheriv("aes-256-gcm", key.bytes(), iv, { authTagLength: TAG_BYTES });
    this.#cipher.setAAD(aad(header, bound));
    this.#remaining = length;
  }

  /** The ciphertext of the next slice of plaintext. */
  update(slice: Uint8Array): Buffer {
    this.#remaining -= slice.length;
    if (this.#remaining < 0) throw new RangeError("more plaintext than the header announces");
    return this.#cipher.update(slice);
  }

  /** What follows the last slice: the cipher's last bytes (none for GCM) and the tag. */
  end(): Buffer {
    if (this.#remaining !== 0) throw new RangeError("less plaintext than the header announces");
    return Buffer.concat([this.#cipher.final(), this.#cipher.getAuthTag()]);
  }
}

/**
 * The sealed file for `plaintext`: header (a state's magic unless told), ciphertext, tag; `bound`
 * is authenticated with the header, not written.
 */
export function seal(
  plaintext: Uint8Array,
  key: StateKey,
  iv: Buffer = randomIv(),
  magic: Buffer = MAGIC,
  bound?: Uint8Array,
): Buffer {
  const sealer = new Sealer(plaintext.length, key, iv, magic, bound);
  const file = Buffer.allocUnsafe(HEADER_BYTES + plaintext.length + TAG_BYTES);
  let at = sealer.header.copy(file, 0);
  at = streamInto(sealer, plaintext, file, at);
  at += sealer.end().copy(file, at);
  if (at !== file.length) throw new Error("the cipher's output is not its input's length");
  return file;
}

/**
 * The plaintext of a sealed file that starts with `magic` (a state's unless told), or which check
 * it failed: truncated, not a state file (or not a mark), old or future version, foreign key,
 * corrupt (authentication failed, `bound` included). Decrypts in place: the plaintext is a view
 * of `file`, whose ciphertext it overwrites (on any error too); the caller gives up its bytes.
 */
export function unseal(
  file: Uint8Array,
  key: StateKey,
  magic: Buffer = MAGIC,
  bound?: Uint8Array,
): Result<Buffer, StateError> {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const start = bytes.subarray(0, magic.length);
  if (!start.equals(magic.subarray(0, start.length)))
    return err(
      stateError(
        "not-a-state-file",
        `does not start with ${magic === MAGIC ? "the state file's" : magic === MARK_MAGIC ? "a high-water mark's" : "a journal record's"} magic bytes`,
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
  const current = versionFor(magic);
  if (version > current)
    return err(stateError("future-version", `format version ${version}, newer than ${current}`));
  if (version < current)
    return err(stateError("old-version", `format version ${version}, older than ${current}`));
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
  decipher.setAAD(aad(bytes.subarray(0, HEADER_BYTES), bound));
  decipher.setAuthTag(bytes.subarray(expected - TAG_BYTES));
  const body = bytes.subarray(HEADER_BYTES, expected - TAG_BYTES);
  // The output never runs ahead of the input: each slice lands where its ciphertext was read.
  const at = streamInto(decipher, body, bytes, HEADER_BYTES);
  try {
    const end = at + decipher.final().copy(bytes, at);
    return ok(bytes.subarray(HEADER_BYTES, end));
  } catch {
    // final() throws exactly when the tag does not authenticate header and ciphertext.
    return err(stateError("corrupt", "does not authenticate under this key: altered or damaged"));
  }
}
