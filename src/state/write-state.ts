// One write of a state file: encode, seal, replace atomically, a slice at a time (ADR 78): the
// document is encoded, encrypted and written 256 KiB after another, so neither it nor the sealed
// file exists whole, and the main thread gets a turn between slices. The file never holds a
// plaintext byte: only the sealed bytes reach the file system.

import { err, ok, type Result } from "../result.ts";
import { planState } from "./document.ts";
import type { PlannedDocument } from "./document-bytes.ts";
import {
  appendToFile,
  type FileSystem,
  nodeFileSystem,
  type WriteFileError,
  writeFileAtomic,
} from "./file.ts";
import { sealRecord } from "./journal.ts";
import type { StateKey } from "./key.ts";
import { HEADER_BYTES, ivOf, Sealer, TAG_BYTES } from "./seal.ts";
import type { State } from "./state.ts";

/** Plaintext encrypted and written at once: under 1 ms of the main thread. */
const SLICE_BYTES = 1 << 18;

/** A base written: its size, and its IV, which its journal's records are bound to (ADR 79). */
export interface BaseWritten {
  readonly bytes: number;
  readonly iv: Buffer;
}

/**
 * Writes `state` sealed under `key` to `path` atomically, as a base with no journal; resolves
 * with the file's size and the base's IV.
 */
export async function writeStateFile(
  path: string,
  key: StateKey,
  state: State,
  fs: FileSystem = nodeFileSystem,
): Promise<Result<BaseWritten, WriteFileError>> {
  let doc: PlannedDocument;
  let sealer: Sealer;
  try {
    doc = await planState(state);
    sealer = new Sealer(doc.length, key);
  } catch (e) {
    // A bug of the caller (a value that is not a byte string): reported, never written.
    return err({
      message: `encoding the state for ${path}: ${e instanceof Error ? e.message : "failed"}`,
    });
  }
  const sealed = function* (): Iterable<Uint8Array> {
    yield sealer.header;
    for (const slice of doc.slices(SLICE_BYTES)) yield sealer.update(slice);
    yield sealer.end();
  };
  const written = await writeFileAtomic(path, sealed(), fs);
  return written.ok
    ? ok({ bytes: HEADER_BYTES + doc.length + TAG_BYTES, iv: ivOf(sealer.header) })
    : written;
}

/**
 * Appends the journal record `index` of the base `baseIv` holding `plaintext` to the state file
 * at `path`, which must hold `expectedSize` bytes; resolves with the record's sealed size.
 */
export async function appendRecord(
  path: string,
  key: StateKey,
  at: { readonly baseIv: Uint8Array; readonly index: number; readonly expectedSize: number },
  plaintext: Uint8Array,
  fs: FileSystem = nodeFileSystem,
): Promise<Result<{ readonly bytes: number }, WriteFileError>> {
  const sealed = sealRecord(plaintext, key, at.baseIv, at.index);
  const appended = await appendToFile(path, sealed, at.expectedSize, fs);
  return appended.ok ? ok({ bytes: sealed.length }) : appended;
}
