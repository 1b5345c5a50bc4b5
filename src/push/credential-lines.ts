// The zero-hop table's side table of credentials (ADR 53): one line per App the table routes to a
// host with a credential, keyed by the App's name, beside the entries that only flag it
// (table-lines.ts `entryFields`). A request for an App without a credential never reads it, a
// credential is held once rather than once per hostname, and a rotation changes one line of it
// and no entry. Kept per App chunk like the entries' lines, so a push after a Secret change
// renders one chunk's lines, and the lines of two Snapshots are compared chunk by chunk.

import { cachedPer } from "../cached-per.ts";
import type { RouteApp, RouteView } from "../snapshot/types.ts";
import { chunkLists } from "./chunk-lists.ts";
import { flatLine } from "./flat-line.ts";
import { entryOf } from "./table.ts";
import { keyedPlaces } from "./table-lines.ts";

/**
 * How one proxy holds a credential (the whole `Authorization` value: Secret bytes, visible ASCII,
 * space and tab). Must depend on nothing but its argument: lines are kept across Snapshots.
 */
export type CredentialFormat = (credential: string) => string;

/** One App's line of the side table. Holds Secret bytes: never log `value`. */
export interface CredentialLine {
  readonly app: string;
  readonly value: string;
}

/** The side table's lines, per App chunk in slot order (so by App name); callers must not change them. */
export type CredentialLines = readonly (readonly CredentialLine[])[];

type Routes = RouteView["routes"];
type Chunk = readonly RouteApp[];

// Per format, per hostname index (one per Registry): the lines of each App chunk.
const linesPerChunk = cachedPer((format: CredentialFormat) =>
  cachedPer((routes: Routes) => {
    const places = keyedPlaces(routes);
    return chunkLists((chunk: Chunk, c: number): readonly CredentialLine[] => {
      const made: CredentialLine[] = [];
      for (const place of places[c] ?? []) {
        const entry = entryOf(chunk[place]!);
        if (entry.kind === "routed" && entry.target !== null && entry.credential !== null)
          made.push({ app: entry.app, value: flatLine(format(entry.credential)) });
      }
      return made;
    });
  }),
);

/**
 * The side table of `view` in `format`: a list per App chunk, in slot order (the Apps' names in
 * code-unit order), holding each App that holds a key of the table and is routed to a host with a
 * credential. The same list for a chunk that Snapshots of one Registry share.
 */
export const credentialLines = (view: RouteView, format: CredentialFormat): CredentialLines =>
  linesPerChunk(format)(view.routes)(view.apps.chunks);

/** What turns one side table into another: lines to write (new or changed), Apps to drop. */
export interface CredentialChanges {
  /** Lines of the new table whose App had another value or none. */
  readonly written: readonly CredentialLine[];
  /** Of those, the Apps that had none: a proxy that cannot write a missing key adds these. */
  readonly added: ReadonlySet<string>;
  /** Apps the old table had and the new one has not. */
  readonly dropped: readonly string[];
}

/**
 * The changes from `then` to `now`, comparing only the chunks whose lists differ (a Secret change
 * leaves every other chunk's list the same object); after a Registry change every list differs
 * and every line is compared, by App name.
 */
export function credentialChanges(now: CredentialLines, then: CredentialLines): CredentialChanges {
  const before = new Map<string, string>();
  const after: CredentialLine[] = [];
  for (let c = 0; c < Math.max(now.length, then.length); c++) {
    if (now[c] === then[c]) continue;
    for (const line of then[c] ?? []) before.set(line.app, line.value);
    for (const line of now[c] ?? []) after.push(line);
  }
  const written: CredentialLine[] = [];
  const added = new Set<string>();
  for (const line of after) {
    const old = before.get(line.app);
    before.delete(line.app);
    if (old === line.value) continue;
    written.push(line);
    if (old === undefined) added.add(line.app);
  }
  return { written, added, dropped: [...before.keys()] };
}

/** How many lines the side table has. */
export const credentialCount = (lines: CredentialLines): number =>
  lines.reduce((n, chunk) => n + chunk.length, 0);
