// The zero-hop table as one HAProxy map (manifests/data-planes/haproxy/zero-hop/haproxy.cfg):
// exact hostnames and wildcard suffixes under keys that cannot collide, so that one versioned map
// (prepare, add, commit) replaces all of it at once. The revision lives in the overlay beside it
// (haproxy-overlay.ts), which every push writes; the credentials are a map of their own
// (haproxy-credentials.ts).

import type { RouteView } from "../snapshot/types.ts";
import { addLine, addSum, chunkSum, noLines, sumText } from "./line-sum.ts";
import { entryFields, type LineFormat, lineCount, tableLines } from "./table-lines.ts";

/** The key holding the table's revision: upper case, so no lower-cased request host equals it. */
export const REVISION_KEY = "REVISION";

/** Appended to a wildcard's suffix to form its key; upper case for the same reason. */
export const WILDCARD_MARK = "/W";

/** The map as `add map` payloads: every line `key value` (one commit shows all). */
export interface MapPayloads {
  /**
   * Built one at a time as they are taken, so that a push holds one payload rather than all of
   * them (600 kB at 10k Apps, which lived long enough to be promoted and collected as old).
   * Taken once.
   */
  readonly payloads: Iterable<string>;
  /** Lines in all payloads: what the map's entry count grows by once they are added. */
  readonly lines: number;
}

/**
 * The table of `view` as `add map` payloads of at most `maxBytes`. No value holds the revision
 * (haproxy.cfg reads it from the REVISION key, which a push of credentials alone sets too), so an
 * App's line is rendered once per App chunk (table-lines.ts) and a push only joins them.
 */
export function mapPayloads(view: RouteView, maxBytes: number): MapPayloads {
  return {
    payloads: payloads(pieces(mapLines(view)), maxBytes),
    lines: lineCount(view),
  };
}

/** `view`'s map lines per App chunk, without the REVISION key; the same list for a shared chunk. */
export const mapLines = (view: RouteView) => tableLines(view, mapLine);

/** Each chunk's lines as one piece (`payloads` cuts a long piece). */
function* pieces(chunks: readonly (readonly string[])[]): Generator<string> {
  for (const lines of chunks) {
    if (lines.length > 0) yield `${lines.join("\n")}\n`;
  }
}

/** A line: the key, then the entry's fields (`entryFields`). */
const mapLine: LineFormat = (kind, name, entry) => {
  const key = kind === "exact" ? name : `${name}${WILDCARD_MARK}`;
  return `${key} ${entryFields(entry)}`;
};

/**
 * Pieces, each ending in a line break, concatenated in order into payloads of at most
 * `maxBytes`; a piece longer than that is cut at line breaks (a line longer than that alone).
 * The runtime API takes one command and its payload in one buffer (tune.bufsize).
 */
export function* payloads(pieces: Iterable<string>, maxBytes: number): Generator<string> {
  let current: string[] = [];
  let size = 0;
  for (const piece of pieces) {
    for (const part of piece.length > maxBytes ? linesOf(piece) : [piece]) {
      if (size > 0 && size + part.length > maxBytes) {
        yield current.join("");
        current = [];
        size = 0;
      }
      current.push(part);
      size += part.length;
    }
  }
  if (size > 0) yield current.join("");
}

/** A piece's lines, each with its line break. */
const linesOf = (piece: string): string[] => piece.split(/(?<=\n)/);

/**
 * The revision in the answer to `get map <overlay> REVISION`: a number, null when the key is not
 * in the map (HAProxy started with the empty file: nothing pushed yet), or undefined when the
 * answer is not one `get map` gives.
 */
export function parseHeldRevision(answer: string): number | null | undefined {
  const line = answer.split("\n").find((l) => l.startsWith("type=str,"));
  if (line === undefined) return undefined;
  if (line.includes("found=no")) return null;
  const m = /\bvalue="(\d+)"/.exec(line);
  return m === null ? undefined : Number(m[1]);
}

/** `entry_cnt` of `map`'s line in the answer to `show map`; undefined when it has none. */
export function entryCount(answer: string, map: string): number | undefined {
  const line = answer.split("\n").find((l) => l.includes(` (${map}) `));
  const m = line === undefined ? null : /\bentry_cnt=(\d+)/.exec(line);
  return m === null ? undefined : Number(m[1]);
}

/**
 * The digest of the table HAProxy holds while it holds exactly `view`'s: the order-free sum of its
 * `key value` lines and the REVISION (line-sum.ts), as `shownMapDigest` (shown-map.ts) reads the
 * map back under its overlay. Each chunk's lines are summed once.
 */
export function mapDigest(view: RouteView): string {
  const sum = noLines();
  addLine(sum, `${REVISION_KEY} ${view.revision}`);
  for (const chunk of mapLines(view))
    addSum(
      sum,
      chunkSum(chunk, (line) => line),
    );
  return sumText(sum);
}
