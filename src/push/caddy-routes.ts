// The zero-hop table as the Caddy routes that replace the `replica_mirror_table` object of
// manifests/data-planes/caddy/zero-hop/caddy.json. Caddy has no keyed lookup for hosts besides
// the `host` matcher's binary search over a large list (more than 100 names), and a `map`
// handler compares its inputs one by one; so exact names go in groups, each a host matcher (which
// group) and a map (which entry), and wildcards in one map per depth, the deepest tried first.

import type { RoutingTable, TableEntry } from "./table.ts";

/** The `@id` of the object a push replaces (PATCH /id/...). */
export const TABLE_ID = "replica_mirror_table";
/** The `@id` of the handler holding the revision (GET /id/...). */
export const REVISION_ID = "replica_mirror_revision";

/** Hosts per group: about the square root of 10k Apps' names times the cost of a matcher over a comparison. */
export const DEFAULT_GROUP_SIZE = 700;

type Json = { readonly [key: string]: unknown };

/**
 * The routes of one table. Entries, `|`-separated, are what caddy.json's routes read: R|app|
 * revision|host:port|x-mirror-upstream (routed), N|app|revision (no http upstream), S|app (the
 * Secret is not here). Map outputs are expanded as placeholders by Caddy: nothing in an entry
 * holds a brace, as a routed upstream is `http://host[:port]`.
 */
export function caddyTable(table: RoutingTable, groupSize = DEFAULT_GROUP_SIZE): Json {
  const revision = String(table.revision);
  const exact = [...table.exact].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const groups: Json[] = [];
  for (let at = 0; at < exact.length; at += groupSize) {
    const group = exact.slice(at, at + groupSize);
    groups.push({
      match: [{ host: group.map(([host]) => host) }],
      handle: [
        lookupMap("{http.request.host}", "{mirror_exact}", group, revision),
        { handler: "vars", mirror_entry: "{mirror_exact}" },
      ],
      // One route of a group runs: the first whose matcher matches. `terminal` would end the
      // whole handler chain, the answer's routes after the table included.
      group: "replica_mirror_exact",
    });
  }
  const byDepth = new Map<number, [string, TableEntry][]>();
  for (const [suffix, entry] of table.wildcard) {
    const depth = suffix.split(".").length;
    const list = byDepth.get(depth) ?? [];
    list.push([suffix, entry]);
    byDepth.set(depth, list);
  }
  const wildcards = [...byDepth.keys()]
    .sort((a, b) => b - a)
    .map((depth) => ({
      // Not found yet, and the host has a label above a suffix of `depth` labels.
      match: [
        {
          vars: { mirror_entry: [""] },
          not: [{ vars: { [`{http.request.host.labels.${depth}}`]: [""] } }],
        },
      ],
      handle: [
        lookupMap(suffixOf(depth), `{mirror_wild_${depth}}`, byDepth.get(depth)!, revision),
        { handler: "vars", mirror_entry: `{mirror_wild_${depth}}` },
      ],
    }));
  return {
    "@id": TABLE_ID,
    handle: [
      { "@id": REVISION_ID, handler: "vars", mirror_revision: revision },
      {
        handler: "subroute",
        routes: [
          { match: [{ vars: { mirror_bad: ["1"] } }], handle: [badHost] },
          ...groups,
          // A longer name is in no group; it must not reach a wildcard either.
          {
            match: [
              { vars_regexp: { "{http.request.host}": { name: "long", pattern: "^.{254,}$" } } },
            ],
            handle: [badHost],
            group: "replica_mirror_exact",
          },
          ...wildcards,
        ],
      },
    ],
  };
}

const badHost: Json = {
  handler: "static_response",
  status_code: 400,
  headers: { "X-Mirror-Reason": ["bad-host"] },
};

/** `{http.request.host.labels.<depth-1>}.….{http.request.host.labels.0}`: the host's last `depth` labels. */
function suffixOf(depth: number): string {
  return Array.from(
    { length: depth },
    (_, i) => `{http.request.host.labels.${depth - 1 - i}}`,
  ).join(".");
}

function lookupMap(
  source: string,
  destination: string,
  entries: readonly (readonly [string, TableEntry])[],
  revision: string,
): Json {
  return {
    handler: "map",
    source,
    destinations: [destination],
    mappings: entries.map(([input, entry]) => ({ input, outputs: [entryValue(entry, revision)] })),
  };
}

function entryValue(entry: TableEntry, revision: string): string {
  if (entry.kind === "secret-unavailable") return `S|${entry.app}`;
  const { target } = entry;
  if (target === null) return `N|${entry.app}|${revision}`;
  return `R|${entry.app}|${revision}|${target.host}:${target.port}|${entry.upstream}`;
}

/** The revision in the answer to GET /id/replica_mirror_revision, or undefined if it holds none. */
export function parseCaddyRevision(body: unknown): number | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const value = (body as Json).mirror_revision;
  return typeof value === "string" && /^\d+$/.test(value) ? Number(value) : undefined;
}
