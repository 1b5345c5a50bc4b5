// The state file's key: 32 bytes from a mounted Secret. The file may hold them raw (what the
// README's command creates), as 64 hex characters or as base64; a text form may end in a newline.

import { createHmac } from "node:crypto";
import { inspect } from "node:util";
import { err, ok, type Result } from "../result.ts";
import { readFileCapped } from "./file.ts";

export const KEY_BYTES = 32;

/** Larger than any accepted form: a bigger file is refused unread. */
const MAX_KEY_FILE_BYTES = 1024;

const HEX = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]{43}=?$/;

/** Why a key file was refused; the message never quotes the file's content. */
export interface KeyError {
  /** True when there is no file at all (an optional key Secret that was not created). */
  readonly missing: boolean;
  readonly message: string;
}

/**
 * A key and its id (a keyed digest, 16 hex characters, safe to log and to store in a file's
 * header). The bytes stay out of logs, JSON and inspect().
 */
export class StateKey {
  readonly #bytes: Buffer;
  readonly id: string;

  constructor(bytes: Uint8Array) {
    if (bytes.length !== KEY_BYTES) throw new RangeError(`a state key is ${KEY_BYTES} bytes`);
    this.#bytes = Buffer.from(bytes);
    this.id = createHmac("sha256", this.#bytes)
      .update("replica-mirror state key id")
      .digest()
      .subarray(0, 8)
      .toString("hex");
  }

  /** The key's bytes, for the cipher only. */
  bytes(): Buffer {
    return this.#bytes;
  }

  toJSON(): string {
    return `StateKey(${this.id})`;
  }

  [inspect.custom](): string {
    return `StateKey(${this.id})`;
  }
}

const stripNewline = (text: string): string => text.replace(/\r?\n$/, "");

/** The key a key file's content holds: 32 raw bytes, or 64 hex characters, or base64 of 32 bytes. */
export function parseKey(content: Uint8Array): Result<StateKey, KeyError> {
  const bytes = Buffer.from(content);
  const key =
    bytes.length === KEY_BYTES ? bytes : decodeText(stripNewline(bytes.toString("latin1")));
  if (key === null)
    return err({
      missing: false,
      message: `holds ${bytes.length} bytes that are not a key: expected ${KEY_BYTES} raw bytes, 64 hex characters or base64 of ${KEY_BYTES} bytes (an optional trailing newline)`,
    });
  if (key.every((b) => b === key[0]))
    return err({ missing: false, message: `holds ${KEY_BYTES} identical bytes: not a random key` });
  return ok(new StateKey(key));
}

function decodeText(text: string): Buffer | null {
  if (HEX.test(text)) return Buffer.from(text, "hex");
  if (BASE64.test(text)) {
    const decoded = Buffer.from(text, "base64");
    return decoded.length === KEY_BYTES ? decoded : null;
  }
  return null;
}

/** The key in the file at `path` (a mounted Secret's key); a message says what is wrong with it. */
export async function readKeyFile(path: string): Promise<Result<StateKey, KeyError>> {
  const content = await readFileCapped(path, MAX_KEY_FILE_BYTES);
  if (!content.ok)
    return err({
      missing: content.error.kind === "missing",
      message: `state key file ${content.error.message}`,
    });
  const key = parseKey(content.value);
  return key.ok
    ? key
    : err({ missing: false, message: `state key file ${path} ${key.error.message}` });
}
