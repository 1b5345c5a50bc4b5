// The high-water mark: the newest generation this pod wrote, sealed in a small file beside the
// state file and replaced after each state is. A start that finds a state file with fewer writes
// than the mark serves a copy older than the newest this pod wrote (generation.ts). Whoever can
// write the volume can put back an old mark with the old file: the mark tells a file replayed
// alone, never the two replayed together (README, "The state file"; ADR 50).

import * as z from "zod";
import { err, ok, type Result } from "../result.ts";
import { generationSchema } from "./document.ts";
import { type StateError, stateError } from "./errors.ts";
import {
  type FileSystem,
  nodeFileSystem,
  readFileCapped,
  type WriteFileError,
  writeFileAtomic,
} from "./file.ts";
import type { StateKey } from "./key.ts";
import { MARK_FORMAT_VERSION, MARK_MAGIC, seal, unseal } from "./seal.ts";
import type { Generation, State } from "./state.ts";

/** The newest state a pod wrote, as its mark records it. */
export interface Mark extends Generation {
  /** That state's `savedAt`. */
  readonly savedAt: number;
  /**
   * That state's Registry Secret resourceVersion; null: absent. Named in logs, never ordered:
   * resourceVersions are opaque strings.
   */
  readonly registry: string | null;
}

/** Far more than a mark's JSON: a bigger file is refused unread. */
const MAX_MARK_BYTES = 4096;

const markSchema = z.object({
  format: z.literal(MARK_FORMAT_VERSION),
  ...generationSchema.shape,
  savedAt: z.number().int().nonnegative(),
  registry: z.string().min(1).nullable(),
});

/** Where the mark of the state file at `path` is kept: beside it, on the same volume. */
export const markPathOf = (path: string): string => `${path}.newest`;

/** The mark a state leaves once it is written. */
export function markOf(state: State): Mark {
  return {
    ...state.generation,
    savedAt: state.savedAt,
    registry: state.registry.present ? state.registry.resourceVersion : null,
  };
}

/** Replaces the mark at `path` with `mark`, sealed under `key`, atomically. */
export function writeMarkFile(
  path: string,
  key: StateKey,
  mark: Mark,
  fs: FileSystem = nodeFileSystem,
): Promise<Result<void, WriteFileError>> {
  const plaintext = Buffer.from(JSON.stringify({ format: MARK_FORMAT_VERSION, ...mark }), "utf8");
  return writeFileAtomic(path, seal(plaintext, key, undefined, MARK_MAGIC), fs);
}

/** The mark at `path`, if it exists, is sealed under `key` and decodes; otherwise why not. */
export async function readMarkFile(path: string, key: StateKey): Promise<Result<Mark, StateError>> {
  const file = await readFileCapped(path, MAX_MARK_BYTES);
  if (!file.ok) return err(stateError(file.error.kind, `high-water mark ${file.error.message}`));
  const inFile = (e: StateError): StateError => ({
    ...e,
    message: `high-water mark ${path} ${e.message}`,
  });
  const plaintext = unseal(file.value, key, MARK_MAGIC);
  if (!plaintext.ok) return err(inFile(plaintext.error));
  let json: unknown;
  try {
    json = JSON.parse(plaintext.value.toString("utf8"));
  } catch {
    return err(inFile(stateError("malformed", "is not JSON")));
  }
  const parsed = markSchema.safeParse(json);
  if (!parsed.success) {
    const path = parsed.error.issues[0]?.path.map(String).join(".") || "(root)";
    return err(inFile(stateError("malformed", `is invalid at ${path}`)));
  }
  const { format: _, ...mark } = parsed.data;
  return ok(mark);
}
