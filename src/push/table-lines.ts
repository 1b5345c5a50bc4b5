// The zero-hop table as a proxy's text lines, one per hostname and wildcard suffix, rendered per
// App chunk and kept while the chunk lives. A Snapshot after a Secret change shares its hostname
// index and every App chunk but the changed Apps' (src/snapshot/app-table.ts), so a push of 10k
// Apps renders one chunk's lines, not 10k: rendering the whole table took about 8 ms a push
// (plus its garbage), which the push's write-to-answer time paid in full.

import { cachedPer } from "../cached-per.ts";
import { CHUNK_SIZE } from "../snapshot/app-table.ts";
import type { RouteApp, RouteView } from "../snapshot/types.ts";
import { chunkLists } from "./chunk-lists.ts";
import { flatLine } from "./flat-line.ts";
import { entryOf, type NotRoutedReason, type TableEntry } from "./table.ts";

/** A table key: an exact hostname, or the suffix of a wildcard (`a.b` for `*.a.b`). */
export type KeyKind = "exact" | "wildcard";

/**
 * How one proxy writes the line of a key, without its line break. It must depend on nothing but
 * its arguments (the lines are kept across Snapshots), so never on the revision.
 */
export type LineFormat = (kind: KeyKind, name: string, entry: TableEntry) => string;

type Routes = RouteView["routes"];
type Chunk = readonly RouteApp[];

/** A key of the hostname index, at its App's place in the App's chunk. */
export interface Key {
  readonly kind: KeyKind;
  readonly name: string;
  /** The App's place in its chunk. */
  readonly index: number;
}

// Per format, per hostname index (one per Registry): the lines of each App chunk.
const linesPerChunk = cachedPer((format: LineFormat) =>
  cachedPer((routes: Routes) => {
    const keys = keysOf(routes);
    return chunkLists((chunk: Chunk, c: number) =>
      (keys[c] ?? []).map((k) => flatLine(format(k.kind, k.name, entryOf(chunk[k.index]!)))),
    );
  }),
);

/**
 * The table's lines in `format`: a list per App chunk, in slot order, each list exact hostnames
 * first and then wildcard suffixes, every key of the view's index once. Lists of chunks whose
 * Apps hold no key are empty. Callers must not change the lists.
 */
export const tableLines = (view: RouteView, format: LineFormat): readonly (readonly string[])[] =>
  linesPerChunk(format)(view.routes)(view.apps.chunks);

/** The kind field of an App that is not routed, by its 503's reason. */
export const NOT_ROUTED_KIND: Readonly<Record<NotRoutedReason, string>> = {
  "secret-unavailable": "S",
  "secret-unusable": "U",
  "credentials-off": "O",
};

/** The last field of a routed entry whose App has a credential (empty: it has none). */
export const CREDENTIAL_FLAG = "c";

/**
 * An entry's value as the proxies' configurations read it by `|`-separated field: the kind (I:
 * routed to an IPv4 literal, D: routed to a DNS name, N: routed but no http upstream, and the
 * 503s of `NOT_ROUTED_KIND`), the App, then, when routed to a host, that host, its port and
 * `CREDENTIAL_FLAG` when the App has a credential (empty: none, the client's `Authorization` goes
 * on). The credential itself is in the proxy's side table, once per App (credential-lines.ts), so
 * a request for an App without one never touches it and a rotation changes no entry. No space, no
 * line break; a format may append fields of its own.
 */
export function entryFields(entry: TableEntry): string {
  if (entry.kind === "not-routed") return `${NOT_ROUTED_KIND[entry.reason]}|${entry.app}`;
  const { target } = entry;
  if (target === null) return `N|${entry.app}`;
  const flag = entry.credential === null ? "" : CREDENTIAL_FLAG;
  return `${target.literal ? "I" : "D"}|${entry.app}|${target.host}|${target.port}|${flag}`;
}

/** How many lines `tableLines` gives for `view`: its exact hostnames and wildcard suffixes. */
export const lineCount = (view: RouteView): number =>
  view.routes.exact.size + view.routes.wildcard.size;

/**
 * Per hostname index and App chunk: the places in the chunk of the Apps that hold a key, in
 * order (an App whose every hostname another App won holds none).
 */
export const keyedPlaces = cachedPer((routes: Routes): readonly (readonly number[])[] =>
  keysOf(routes).map((keys) => [...new Set(keys.map((k) => k.index))].sort((a, b) => a - b)),
);

/** Per hostname index: its keys grouped by the App chunk of their slot. */
export const keysOf = cachedPer((routes: Routes): readonly (readonly Key[])[] => {
  const grouped: Key[][] = [];
  const add = (kind: KeyKind, name: string, slot: number) => {
    const c = Math.floor(slot / CHUNK_SIZE);
    const group = grouped[c] ?? [];
    grouped[c] = group;
    group.push({ kind, name, index: slot % CHUNK_SIZE });
  };
  for (const [name, slot] of routes.exact) add("exact", name, slot);
  for (const [name, slot] of routes.wildcard) add("wildcard", name, slot);
  return grouped;
});
