// One write of a state file: encode, seal, replace atomically, a slice at a time (ADR 78): the
// document is encoded, encrypted and written 256 KiB after another, so neither it nor the sealed
// file exists whole, and the main thread gets a turn between slices. The file never holds a
// plaintext byte: only the sealed bytes reach the file system.

import { err, ok, type Result } from "../result.ts";
import { type PlannedDocument, planState } from "./document.ts";
import { type FileSystem, nodeFileSystem, type WriteFileError, writeFileAtomic } from "./file.ts";
import type { StateKey } from "./key.ts";
import { HEADER_BYTES, Sealer, TAG_BYTES } from "./seal.ts";
import type { State } from "./state.ts";

/** Plaintext encrypted and written at once: under 1 ms of the main thread. */
const SLICE_BYTES = 1 << 18;

/** Writes `state` sealed under `key` to `path` atomically; resolves with the file's size. */
export async function writeStateFile(
  path: string,
  key: StateKey,
  state: State,
  fs: FileSystem = nodeFileSystem,
): Promise<Result<{ readonly bytes: number }, WriteFileError>> {
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
  return written.ok ? ok({ bytes: HEADER_BYTES + doc.length + TAG_BYTES }) : written;
}
