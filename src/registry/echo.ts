// What a refusal may repeat of the document it refuses. Refusals are logged and served on the
// status API on every change, so what they carry is bounded whatever the document holds: a
// 20 KiB gzip value can decompress to a 20 MiB name (README, "The Registry document").

import { createHash } from "node:crypto";

/** Characters of a refused entry's `name` repeated as written. */
const NAME_PREFIX = 64;

/** Refused App entries a log line or a status answer lists one by one; the rest are counted. */
export const LISTED_REFUSALS = 10;

/**
 * `name` as a refusal repeats it: whole up to 64 characters; else its first 64, `…` and 8 hex
 * digits of its sha256, so that two long names still tell apart. Never equal to a valid App
 * name, which is at most 63 characters and has no `…`.
 */
export function echoName(name: string): string {
  if (name.length <= NAME_PREFIX) return name;
  let prefix = name.slice(0, NAME_PREFIX);
  // Not half of a surrogate pair: the prefix stays valid UTF-16.
  const last = prefix.charCodeAt(NAME_PREFIX - 1);
  if (last >= 0xd800 && last <= 0xdbff) prefix = prefix.slice(0, -1);
  return `${prefix}…${createHash("sha256").update(name).digest("hex").slice(0, 8)}`;
}

/** The first `LISTED_REFUSALS` of `refused`, and how many more there are. */
export function listedRefusals<T>(refused: readonly T[]): {
  readonly listed: readonly T[];
  readonly more: number;
} {
  if (refused.length <= LISTED_REFUSALS) return { listed: refused, more: 0 };
  return { listed: refused.slice(0, LISTED_REFUSALS), more: refused.length - LISTED_REFUSALS };
}
