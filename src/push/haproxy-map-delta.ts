// The routing map's changes between two views of one Registry, as `set map` commands on the
// map's current version (ADR 58): a Secret change changes the values of its Apps' keys and never
// which keys there are, so each command swaps one entry's value in place and a request finds the
// same key it would find in either view. A Registry change adds and removes keys, which changes
// the key a request's label-by-label walk stops at: it goes as a new version, whole.

import { argument, batched } from "./haproxy-commands.ts";

/** A view's map lines per App chunk, as `mapLines` (haproxy-map.ts) gives them. */
export type ChunkLines = readonly (readonly string[])[];

/**
 * The most entries a push changes by `set map`; past it the map goes whole. HAProxy 2.6 finds a
 * `set map` key by walking the map's entries, so a key costs time in proportion to the map, as a
 * whole version does, and they meet at about the same count of keys: in two runs of
 * `test/push/smoke-delta.ts` (p50 of 5), 64 entries took 11–13 ms at 10k Apps (whole 23–25 ms)
 * and 175–238 ms at 100k (whole 225–281 ms); 16 entries 3.6–4.6 and 73–94 ms (ADR 58).
 */
export const MAX_SET_ENTRIES = 32;

/**
 * The lines of `now` whose key holds another value in `then`, where both are `mapLines` of views
 * over one hostname index (the same keys, chunk by chunk, in the same order). Only chunks whose
 * lists are different objects are compared: a Secret change leaves every other chunk's list the
 * same object. Null when more than `bound` lines changed or the chunks do not line up.
 */
export function changedLines(now: ChunkLines, then: ChunkLines, bound: number): string[] | null {
  if (now.length !== then.length) return null;
  const changed: string[] = [];
  for (let c = 0; c < now.length; c++) {
    const [a, b] = [now[c]!, then[c]!];
    if (a === b) continue;
    if (a.length !== b.length) return null;
    for (let i = 0; i < a.length; i++) {
      if (a[i] === b[i]) continue;
      if (changed.length === bound) return null;
      changed.push(a[i]!);
    }
  }
  return changed;
}

/**
 * `set map` commands per command line: a line's commands run within one command's timeout, and
 * each walks the map (at 100k Apps one took 2 to 14 ms by its key; the Registry allows 250k).
 */
export const SETS_PER_LINE = 16;

/**
 * `set map` commands writing `lines` (`key value`) into the current version of `map`, joined by
 * `;` on command lines of at most `bytes` and SETS_PER_LINE commands: one connection for many
 * keys.
 */
export function setCommands(map: string, lines: readonly string[], bytes: number): string[] {
  const pairs = lines.map((line) => {
    const space = line.indexOf(" ");
    return `${argument(line.slice(0, space))} ${argument(line.slice(space + 1))}`;
  });
  const out: string[] = [];
  for (let i = 0; i < pairs.length; i += SETS_PER_LINE)
    out.push(...batched(`set map ${map}`, pairs.slice(i, i + SETS_PER_LINE), bytes));
  return out;
}
