// The zero-hop table as the routes of Caddy's server, which replace the not-synced routes of
// manifests/data-planes/caddy/zero-hop/caddy.json. They are the server's own routes because
// Caddy 2.6 compiles those once, and a subroute's on every request (about 0.4 µs per route).
//
// Caddy has no keyed lookup besides the `host` matcher's binary search over more than 100 names,
// which says only yes or no, and a `map` handler, which compares its inputs one by one. So:
//
// 1. a Host not in normal form is normalised (caddy-host-routes.ts);
// 2. a Host that is no exact name (one `host` matcher over them all, about 1 µs at 10k) is
//    checked and looked for under the wildcards, depth by depth, and answered inside that route
//    (the wildcard keys' routes run there, on the key found);
// 3. an exact name reaches the exact keys' routes (caddy-key-routes.ts).
//
// Every push is a reload of Caddy's whole configuration, which costs about 150 ms of CPU per MB
// of it: a key appears in one `host` list and one `map` (an App's without an answer from its
// upstream in one more list), and nothing else grows with the table (0.9 MB at 10k Apps).

import { type Json, unknownHost } from "./caddy-answers.ts";
import { missRoute, normaliseRoute, wildcardKey } from "./caddy-host-routes.ts";
import { type KeyRoutesOptions, keyRoutes } from "./caddy-key-routes.ts";
import type { RoutingTable, TableEntry } from "./table.ts";

/** The `@id` of the server whose routes a push replaces. */
export const SERVER_ID = "replica_mirror_server";
/** The admin API path a push replaces (PATCH). */
export const ROUTES_PATH = `/id/${SERVER_ID}/routes`;
/** The `@id` of the handler holding the revision (GET /id/...). */
export const REVISION_ID = "replica_mirror_revision";

/** The server routes that answer from `table`. */
export function caddyRoutes(table: RoutingTable, options: KeyRoutesOptions = {}): Json[] {
  const revision = String(table.revision);
  const wildcards = new Map<number, string[]>();
  const wildcardEntries: [string, TableEntry][] = [];
  for (const [suffix, entry] of table.wildcard) {
    const key = wildcardKey(suffix);
    wildcardEntries.push([key, entry]);
    const depth = suffix.split(".").length;
    const keys = wildcards.get(depth);
    if (keys === undefined) wildcards.set(depth, [key]);
    else keys.push(key);
  }
  const exact = [...table.exact].sort(byKey);
  return [
    normaliseRoute(),
    missRoute(
      exact.map(([host]) => host),
      wildcards,
      keyRoutes(wildcardEntries.sort(byKey), revision, options, true),
    ),
    ...keyRoutes(exact, revision, options),
    // Never reached (every exact name has its route): it holds the revision pushes read back.
    { handle: [{ "@id": REVISION_ID, handler: "vars", mirror_revision: revision }, unknownHost] },
  ];
}

const byKey = ([a]: readonly [string, unknown], [b]: readonly [string, unknown]) =>
  a < b ? -1 : a > b ? 1 : 0;

/** The revision in the answer to GET /id/replica_mirror_revision, or undefined if it holds none. */
export function parseCaddyRevision(body: unknown): number | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const value = (body as Json).mirror_revision;
  return typeof value === "string" && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** Whether `routes` (the server's, as GET gives them) hold the handler of a pushed revision. */
export function holdsRevision(routes: unknown): boolean {
  if (!Array.isArray(routes)) return false;
  return routes.some(
    (route: Json | null) =>
      Array.isArray(route?.handle) &&
      route.handle.some((h: Json | null) => h?.["@id"] === REVISION_ID),
  );
}
