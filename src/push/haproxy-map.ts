// The zero-hop table as one HAProxy map (manifests/data-planes/haproxy/zero-hop/haproxy.cfg):
// exact hostnames, wildcard suffixes and the revision under keys that cannot collide, so that
// one versioned map (prepare, add, commit) replaces all of it at once.

import type { RoutingTable, TableEntry } from "./table.ts";

/** The key holding the table's revision: upper case, so no lower-cased request host equals it. */
export const REVISION_KEY = "REVISION";

/** Appended to a wildcard's suffix to form its key; upper case for the same reason. */
export const WILDCARD_MARK = "/W";

/** The map's lines, `key value`, the revision last (any order would do: one commit shows all). */
export function mapLines(table: RoutingTable): string[] {
  const lines: string[] = [];
  const revision = String(table.revision);
  for (const [host, entry] of table.exact) lines.push(`${host} ${entryValue(entry, revision)}`);
  for (const [suffix, entry] of table.wildcard) {
    lines.push(`${suffix}${WILDCARD_MARK} ${entryValue(entry, revision)}`);
  }
  lines.push(`${REVISION_KEY} ${revision}`);
  return lines;
}

/**
 * An entry's value, `|`-separated, as the configuration's backend reads it by field: the kind
 * (I: routed to an IPv4 literal, D: routed to a DNS name, N: routed but no http upstream, S: the
 * Secret is not here), the App, the revision, then host and port. No space, no line break.
 */
function entryValue(entry: TableEntry, revision: string): string {
  if (entry.kind === "secret-unavailable") return `S|${entry.app}`;
  const { target } = entry;
  if (target === null) return `N|${entry.app}|${revision}`;
  return `${target.literal ? "I" : "D"}|${entry.app}|${revision}|${target.host}|${target.port}`;
}

/**
 * Lines grouped into payloads of at most `maxBytes` (each line and its newline counted), in
 * order: the runtime API takes one command and its payload in one buffer (tune.bufsize).
 */
export function payloads(lines: readonly string[], maxBytes: number): string[] {
  const out: string[] = [];
  let current = "";
  for (const line of lines) {
    const piece = `${line}\n`;
    if (current.length > 0 && current.length + piece.length > maxBytes) {
      out.push(current);
      current = "";
    }
    current += piece;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * The revision in the answer to `get map <map> REVISION`: a number, null when the key is not in
 * the map (HAProxy started with the empty file: nothing pushed yet), or undefined when the
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
