// The warm start's one call: read, open, decode and check a state file. Every failure is a value.

import { err, ok, type Result } from "../result.ts";
import { checkAge, checkConfig } from "./check.ts";
import { decodeState } from "./document.ts";
import { type StateError, stateError } from "./errors.ts";
import { readFileCapped } from "./file.ts";
import type { StateKey } from "./key.ts";
import { unseal } from "./seal.ts";
import type { State, StateConfig } from "./state.ts";

/** Larger than a state of 100k Secrets of 1 KiB: a bigger file is refused unread. */
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

/**
 * The state in the file, if it exists, is sealed under `key`, authenticates, decodes, is at most
 * maxAgeMs old and was written under `config`; otherwise which of these failed. Never throws.
 */
export async function readStateFile(options: ReadStateOptions): Promise<Result<State, StateError>> {
  const { path } = options;
  const inFile = (e: StateError): StateError => ({
    ...e,
    message: `state file ${path} ${e.message}`,
  });
  const file = await readFileCapped(path, options.maxBytes ?? DEFAULT_MAX_STATE_BYTES);
  if (!file.ok) return err(stateError(file.error.kind, `state file ${file.error.message}`));
  const plaintext = unseal(file.value, options.key);
  if (!plaintext.ok) return err(inFile(plaintext.error));
  const state = decodeState(plaintext.value);
  if (!state.ok) return err(inFile(state.error));
  const age = checkAge(state.value.savedAt, options.now, options.maxAgeMs);
  if (!age.ok) return err(inFile(age.error));
  const config = checkConfig(state.value.config, options.config);
  if (!config.ok) return err(inFile(config.error));
  return ok(state.value);
}
