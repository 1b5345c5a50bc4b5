// The routing map's changes between two views of one Registry, as entries of the overlay map
// (ADR 60): a Secret change changes the values of its Apps' keys, never which keys there are, and
// every key of one App holds the same value, so a change is one overlay entry per App, keyed by
// the App, which haproxy.cfg reads over the entry its host walk found. HAProxy 2.6 finds a `set
// map` or `del map` key by walking the whole map, so a key of the big map costs in proportion to
// the Registry; the overlay stays small (MAX_OVERLAY_APPS) and its keys cost next to nothing. A
// Registry change adds and removes keys, which changes the key a request's label-by-label walk
// stops at: the map goes as a new version, whole, and the overlay is emptied after it.

import { argument } from "./haproxy-commands.ts";

/** A view's map lines per App chunk, as `mapLines` (haproxy-map.ts) gives them. */
export type ChunkLines = readonly (readonly string[])[];

/**
 * The most Apps the overlay holds; a push that would hold more sends the map whole, which
 * empties it. Each overlay command walks at most this many entries, and every routed request
 * looks its App up in the overlay's tree.
 */
export const MAX_OVERLAY_APPS = 1_000;

/** The most lines a push compares one by one before it sends the map whole. */
const MAX_CHANGED_LINES = 8_192;

/**
 * The entries of the Apps whose lines changed from `then` to `now`, App → value, where both
 * are `mapLines` of views over one hostname index (the same keys, chunk by chunk, in the same
 * order). Only chunks whose lists are different objects are compared: a Secret change leaves
 * every other chunk's list the same object. Null when the chunks do not line up, or past the
 * bounds.
 */
export function changedApps(
  now: ChunkLines,
  then: ChunkLines,
  maxApps: number,
): Map<string, string> | null {
  if (now.length !== then.length) return null;
  const changed = new Map<string, string>();
  let lines = 0;
  for (let c = 0; c < now.length; c++) {
    const [a, b] = [now[c]!, then[c]!];
    if (a === b) continue;
    if (a.length !== b.length) return null;
    for (let i = 0; i < a.length; i++) {
      if (a[i] === b[i]) continue;
      if (++lines > MAX_CHANGED_LINES) return null;
      const value = a[i]!.slice(a[i]!.indexOf(" ") + 1);
      changed.set(appOf(value), value);
      if (changed.size > maxApps) return null;
    }
  }
  return changed;
}

/** The App an entry's value names: its second `|`-separated field (table-lines.ts). */
export function appOf(value: string): string {
  const start = value.indexOf("|") + 1;
  if (start === 0) return "";
  const end = value.indexOf("|", start);
  return value.slice(start, end < 0 ? value.length : end);
}

/** Commands per command line: each walks the overlay, whose size is bounded. */
export const COMMANDS_PER_LINE = 64;

/**
 * Commands writing `entries` (key → value) into the current version of `map`, in their order:
 * `set map` for a key it holds (`held`), `add map` for one it does not, joined by `;` on command
 * lines of at most `bytes` and COMMANDS_PER_LINE commands: one connection for many keys. The keys
 * and values go as one argument each (escaped).
 */
export function overlayCommands(
  map: string,
  entries: ReadonlyMap<string, string>,
  held: (key: string) => boolean,
  bytes: number,
): string[] {
  const out: string[] = [];
  let line = "";
  let count = 0;
  for (const [key, value] of entries) {
    const command = `${held(key) ? "set" : "add"} map ${map} ${argument(key)} ${argument(value)}`;
    if (line !== "" && (line.length + command.length + 1 > bytes || count === COMMANDS_PER_LINE)) {
      out.push(line);
      line = "";
      count = 0;
    }
    line = line === "" ? command : `${line};${command}`;
    count++;
  }
  if (line !== "") out.push(line);
  return out;
}

/**
 * Where haproxy.cfg finds the overlay of a map it names: `<name>-overlay.map` beside
 * `<name>.map` (a name without `.map` gets `-overlay` appended).
 */
export const overlayOf = (map: string): string =>
  map.endsWith(".map") ? `${map.slice(0, -4)}-overlay.map` : `${map}-overlay`;
