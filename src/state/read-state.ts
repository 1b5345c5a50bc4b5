// The warm start's one call: read, open, decode and check a state file, its journal replayed
// (ADR 79). Every failure is a value.

import { err, ok, type Result } from "../result.ts";
import { checkAge, checkConfig } from "./check.ts";
import { decodeState } from "./document.ts";
import { type StateError, stateError } from "./errors.ts";
import { readFileCapped } from "./file.ts";
import { type JournalRead, readJournal, replay } from "./journal.ts";
import type { StateKey } from "./key.ts";
import { ivOf, sealedLength, unseal } from "./seal.ts";
import type { State, StateConfig } from "./state.ts";

/**
 * Larger than a state of 100k Secrets of 1 KiB with a journal as long as it (a longer one is
 * compacted): a bigger file is refused unread.
 */
export const DEFAULT_MAX_STATE_BYTES = 256 * 1024 * 1024;

export interface ReadStateOptions {
  readonly path: string;
  readonly key: StateKey;
  /** The oldest state to accept, in milliseconds. */
  readonly maxAgeMs: number;
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** The configuration this process runs under (stateConfig()). */
  readonly config: StateConfig;
  readonly maxBytes?: number;
}

/** A state file opened: the state its base and journal hold, and how the journal read. */
export interface OpenedStateFile {
  readonly state: State;
  /** The base's IV, which its records are bound to, and its sealed size. */
  readonly base: { readonly iv: Buffer; readonly bytes: number };
  readonly journal: JournalRead;
}

/**
 * The state a file's bytes hold: its base, which must open and decode, with the records that
 * follow it replayed up to a torn tail or the first that does not open (ADR 79). Decrypts in
 * place, as `unseal`. Never throws.
 */
export function openStateFile(file: Buffer, key: StateKey): Result<OpenedStateFile, StateError> {
  const baseLength = Math.min(sealedLength(file) ?? file.length, file.length);
  const baseIv = ivOf(file);
  const plaintext = unseal(file.subarray(0, baseLength), key);
  if (!plaintext.ok) return plaintext;
  const base = decodeState(plaintext.value);
  if (!base.ok) return base;
  const { records, read } = readJournal(file, baseLength, key, baseIv, base.value.config);
  const at = { iv: baseIv, bytes: baseLength };
  return ok({ state: replay(base.value, records), base: at, journal: read });
}

/**
 * The state in the file with its journal, if it exists, is sealed under `key`, authenticates,
 * decodes, is at most maxAgeMs old and was written under `config`; otherwise which of these
 * failed. Never throws.
 */
export async function readStateWithJournal(
  options: ReadStateOptions,
): Promise<Result<OpenedStateFile, StateError>> {
  const { path } = options;
  const inFile = (e: StateError): StateError => ({
    ...e,
    message: `state file ${path} ${e.message}`,
  });
  const file = await readFileCapped(path, options.maxBytes ?? DEFAULT_MAX_STATE_BYTES);
  if (!file.ok) return err(stateError(file.error.kind, `state file ${file.error.message}`));
  const opened = openStateFile(file.value, options.key);
  if (!opened.ok) return err(inFile(opened.error));
  const { state, base, journal } = opened.value;
  const age = checkAge(state.savedAt, options.now, options.maxAgeMs);
  if (!age.ok) return err(inFile(age.error));
  const config = checkConfig(state.config, options.config);
  if (!config.ok) return err(inFile(config.error));
  const stopped = journal.stopped === null ? null : inFile(journal.stopped);
  return ok({ state, base, journal: { ...journal, stopped } });
}

/** `readStateWithJournal`'s state alone. */
export async function readStateFile(options: ReadStateOptions): Promise<Result<State, StateError>> {
  const read = await readStateWithJournal(options);
  return read.ok ? ok(read.value.state) : read;
}
