// The digest of a map as HAProxy's `show map <map>` lists it (one `<pointer> <key> <value>` a
// line), read as bytes: the same digest as `sortedLinesDigest` of its `key value` lines, the form
// the pushed side computes (table-digest.ts), without decoding the answer into strings. At 10k
// Apps with 1 KiB credentials the answer is 10 MB: decoded, split, matched and hashed line by line
// as strings it took the sidecar's main thread about 50 ms a verification, 5 s apart, and a
// rotation that came meanwhile waited for it (BENCHMARKS.md, Rotation).

import { createHash } from "node:crypto";

const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const LINE_END = Buffer.from("\n");

export interface ShownMapRules {
  /** Whether a value may hold spaces (a credential may; a routing entry may not). */
  readonly valueSpaces: boolean;
  /** A key the map must hold, else the digest is null (the routing map's REVISION). */
  readonly required?: string;
}

interface Entry {
  readonly key: string;
  /** From the key to the end of the line: the `key value` line. */
  readonly start: number;
  readonly end: number;
}

/**
 * The digest of the entries in `answer` (trailing line breaks ignored): SHA-256 of their `key
 * value` lines, each followed by a line break, sorted; null when `rules.required` is not a key;
 * undefined when a line is not an entry of a map (HAProxy's words instead, or a byte no entry
 * holds). Keys are sorted by their bytes, which gives the lines' order when no key is a prefix of
 * another followed by a byte below a space: true of every key a push writes.
 */
export function shownMapDigest(answer: Buffer, rules: ShownMapRules): string | null | undefined {
  let length = answer.length;
  while (length > 0 && answer[length - 1] === NL) length--;
  // A credential's bytes are not looked at one by one (10 MB): a CR anywhere fails the answer.
  const cr = answer.indexOf(CR);
  if (rules.valueSpaces && cr >= 0 && cr < length) return undefined;
  const entries: Entry[] = [];
  let found = rules.required === undefined;
  for (let pos = 0; pos < length; ) {
    let end = answer.indexOf(NL, pos);
    if (end < 0 || end > length) end = length;
    const entry = entryOf(answer, pos, end, rules.valueSpaces);
    if (entry === undefined) return undefined;
    if (!found && entry.key === rules.required) found = true;
    entries.push(entry);
    pos = end + 1;
  }
  if (!found) return null;
  entries.sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : answer.compare(answer, b.start, b.end, a.start, a.end),
  );
  const hash = createHash("sha256");
  for (const e of entries) hash.update(answer.subarray(e.start, e.end)).update(LINE_END);
  return hash.digest("hex");
}

/** `0x<hex> <key> <value>` between `pos` and `end`, or undefined. */
function entryOf(
  answer: Buffer,
  pos: number,
  end: number,
  valueSpaces: boolean,
): Entry | undefined {
  if (answer[pos] !== 0x30 || answer[pos + 1] !== 0x78) return undefined;
  let i = pos + 2;
  while (i < end && isHex(answer[i]!)) i++;
  if (i === pos + 2 || answer[i] !== SPACE) return undefined;
  const start = ++i;
  while (i < end && isVisible(answer[i]!)) i++;
  if (i === start || answer[i] !== SPACE) return undefined;
  const key = answer.toString("latin1", start, i);
  if (!valueSpaces) for (i++; i < end; i++) if (!isVisible(answer[i]!)) return undefined;
  return { key, start, end };
}

const isHex = (byte: number) => (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66);

/** A byte of a key: above a space and not DEL (UTF-8's bytes of other characters included). */
const isVisible = (byte: number) => byte > SPACE && byte !== 0x7f;
