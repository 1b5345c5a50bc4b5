// One write of a state file: encode, seal, replace atomically. The file never holds a plaintext
// byte: only the sealed bytes reach the file system.

import { err, ok, type Result } from "../result.ts";
import { encodeState } from "./document.ts";
import { type FileSystem, nodeFileSystem, type WriteFileError, writeFileAtomic } from "./file.ts";
import type { StateKey } from "./key.ts";
import { seal } from "./seal.ts";
import type { State } from "./state.ts";

/** Writes `state` sealed under `key` to `path` atomically; resolves with the file's size. */
export async function writeStateFile(
  path: string,
  key: StateKey,
  state: State,
  fs: FileSystem = nodeFileSystem,
): Promise<Result<{ readonly bytes: number }, WriteFileError>> {
  let sealed: Buffer;
  try {
    sealed = seal(encodeState(state), key);
  } catch (e) {
    // A bug of the caller (a value that is not a byte string): reported, never written.
    return err({
      message: `encoding the state for ${path}: ${e instanceof Error ? e.message : "failed"}`,
    });
  }
  const written = await writeFileAtomic(path, sealed, fs);
  return written.ok ? ok({ bytes: sealed.length }) : written;
}
