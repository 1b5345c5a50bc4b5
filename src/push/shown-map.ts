// The digest of a map as HAProxy's `show map <map>` lists it (one `<pointer> <key> <value>` a
// line), read as bytes: the order-free sum (line-sum.ts) of its `key value` lines, the form the
// pushed side computes chunk by chunk, without decoding the answer into strings or sorting it. At
// 10k Apps with 1 KiB credentials the answer is 10 MB, at 100k Apps the routing map alone 6 MB.

import { addBytes, addLine, type LineSum, noLines, sumText } from "./line-sum.ts";

const NL = 0x0a;
/** Entries read between two turns of the event loop: a few ms of the main thread. */
const SLICE = 2_048;
const CR = 0x0d;
const SPACE = 0x20;

export interface ShownMapRules {
  /** Whether a value may hold spaces (a credential may; a routing entry may not). */
  readonly valueSpaces: boolean;
  /** A key the map must hold, else the digest is null. */
  readonly required?: string;
}

/** What an overlay map (ADR 60) makes of the entries of the map beneath it. */
export interface ShownMapOverlay {
  /** By key: an entry with one of these keys holds this value instead; a key no entry holds is an entry of its own. */
  readonly byKey?: ReadonlyMap<string, string>;
  /** By App: an entry whose value's second `|` field names one of these Apps holds this value instead. */
  readonly byApp?: ReadonlyMap<string, string>;
}

interface Entry {
  readonly key: string;
  /** From the key to the end of the line: the `key value` line. */
  readonly start: number;
  readonly end: number;
  /** The line instead, when an overlay replaced or added it. */
  readonly line?: string;
}

/**
 * The digest of the entries in `answer` (trailing line breaks ignored), each overlaid by
 * `overlay`: the `sumText` of their `key value` lines; null when `rules.required` is not a key;
 * undefined when a line is not an entry of a map (HAProxy's words instead, or a byte no entry
 * holds). Gives the event loop a turn every SLICE entries: at 100k Apps the two big maps are 12 MB
 * and 140 ms of the main thread, which a push (a rotation) must not wait for.
 */
export async function shownMapDigest(
  answer: Buffer,
  rules: ShownMapRules,
  overlay: ShownMapOverlay = {},
): Promise<string | null | undefined> {
  let length = answer.length;
  while (length > 0 && answer[length - 1] === NL) length--;
  // A credential's bytes are not looked at one by one (10 MB): a CR anywhere fails the answer.
  const cr = answer.indexOf(CR);
  if (rules.valueSpaces && cr >= 0 && cr < length) return undefined;
  const sum: LineSum = noLines();
  const byKey = overlay.byKey ?? new Map<string, string>();
  const held = new Set<string>();
  let found = rules.required === undefined;
  let entries = 0;
  for (let pos = 0; pos < length; ) {
    if (++entries % SLICE === 0) await new Promise(setImmediate);
    let end = answer.indexOf(NL, pos);
    if (end < 0 || end > length) end = length;
    const entry = entryOf(answer, pos, end, rules.valueSpaces);
    if (entry === undefined) return undefined;
    if (!found && entry.key === rules.required) found = true;
    const line = overlaid(answer, entry, overlay).line;
    if (line === undefined) addBytes(sum, answer, entry.start, entry.end);
    else addLine(sum, line);
    if (byKey.has(entry.key)) held.add(entry.key);
    pos = end + 1;
  }
  if (!found) return null;
  for (const [key, value] of byKey) if (!held.has(key)) addLine(sum, `${key} ${value}`);
  return sumText(sum);
}

/**
 * The `key value` lines of `answer` as key → value, for a map small enough to decode (an
 * overlay); undefined as for `shownMapDigest`.
 */
export function shownEntries(
  answer: Buffer,
  rules: ShownMapRules,
): Map<string, string> | undefined {
  let length = answer.length;
  while (length > 0 && answer[length - 1] === NL) length--;
  const cr = answer.indexOf(CR);
  if (rules.valueSpaces && cr >= 0 && cr < length) return undefined;
  const out = new Map<string, string>();
  for (let pos = 0; pos < length; ) {
    let end = answer.indexOf(NL, pos);
    if (end < 0 || end > length) end = length;
    const entry = entryOf(answer, pos, end, rules.valueSpaces);
    if (entry === undefined) return undefined;
    const valueStart = entry.start + entry.key.length + 1;
    out.set(entry.key, answer.toString("latin1", Math.min(valueStart, end), end));
    pos = end + 1;
  }
  return out;
}

/** `entry` with the value an overlay gives it. */
function overlaid(answer: Buffer, entry: Entry, overlay: ShownMapOverlay): Entry {
  const byKey = overlay.byKey?.get(entry.key);
  if (byKey !== undefined) return { ...entry, line: lineOf(entry.key, byKey) };
  if (overlay.byApp === undefined || overlay.byApp.size === 0) return entry;
  const value = answer.toString("latin1", entry.start + entry.key.length + 1, entry.end);
  const start = value.indexOf("|") + 1;
  const stop = value.indexOf("|", start);
  const byApp =
    start > 0 ? overlay.byApp.get(value.slice(start, stop < 0 ? undefined : stop)) : undefined;
  return byApp === undefined ? entry : { ...entry, line: lineOf(entry.key, byApp) };
}

const lineOf = (key: string, value: string) => `${key} ${value}`;

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
