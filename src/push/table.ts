// The routing table a proxy holds in zero-hop mode: every hostname and wildcard suffix of one
// Snapshot with the answer `/v1/route` gives for it, computed once per Snapshot. Conflicts were
// settled when the Snapshot was built; the table only copies the winners.

import { headerValue } from "../answers/header-value.ts";
import { cachedPer } from "../cached-per.ts";
import { appAt } from "../snapshot/app-table.ts";
import type { RouteApp, RouteView } from "../snapshot/types.ts";
import { type UpstreamTarget, upstreamTarget } from "./upstream-target.ts";

/**
 * A ready App: the proxy forwards to its upstream with `x-mirror-app` and `x-mirror-revision`,
 * and, when `credential` is set, `Authorization: <credential>` in place of any the client sent.
 */
export interface RoutedEntry {
  readonly kind: "routed";
  readonly app: string;
  /** `x-mirror-upstream` as `/v1/route` sends it (a valid header value), or null when unset. */
  readonly upstream: string | null;
  /** Where the proxy connects; null when `upstream` is not `http://host[:port]`. */
  readonly target: UpstreamTarget | null;
  /**
   * The `Authorization` value the upstream gets (`/v1/route`'s `x-mirror-credential`): Secret
   * bytes, visible ASCII, space and tab only, at most 64 + 8192 bytes; null: the App has no
   * `credential`, and the client's own `Authorization` goes on unchanged.
   */
  readonly credential: string | null;
}

/** Why an App is not routed: the 503's `x-mirror-reason` (`secret-unavailable` and `secret-unusable` with `retry-after`). */
export type NotRoutedReason = "secret-unavailable" | "secret-unusable" | "credentials-off";

/** An App this replica does not route: 503 with `reason` and `x-mirror-app`. */
export interface NotRoutedEntry {
  readonly kind: "not-routed";
  readonly app: string;
  readonly reason: NotRoutedReason;
}

export type TableEntry = RoutedEntry | NotRoutedEntry;

/** One Snapshot's routing table; every routed answer carries `revision`. */
export interface RoutingTable {
  readonly revision: number;
  /** Exact hostname → its App's entry. */
  readonly exact: ReadonlyMap<string, TableEntry>;
  /** Wildcard suffix (`shop.example.com` for `*.shop.example.com`) → its App's entry. */
  readonly wildcard: ReadonlyMap<string, TableEntry>;
}

/**
 * The table of a Snapshot (or of the data thread's view of one): one entry per App, shared by
 * all its hostnames, so the table is as large as the Snapshot's hostname index and no larger.
 * Pure and deterministic: the same view gives an equal table, in the same key order.
 */
export function routingTable(view: RouteView): RoutingTable {
  const entries = new Map<number, TableEntry>();
  const entryAt = (slot: number): TableEntry => {
    let entry = entries.get(slot);
    if (entry === undefined) {
      entry = entryOf(appAt(view.apps, slot)!);
      entries.set(slot, entry);
    }
    return entry;
  };
  const exact = new Map<string, TableEntry>();
  for (const [host, slot] of view.routes.exact) exact.set(host, entryAt(slot));
  const wildcard = new Map<string, TableEntry>();
  for (const [suffix, slot] of view.routes.wildcard) wildcard.set(suffix, entryAt(slot));
  return { revision: view.revision, exact, wildcard };
}

/**
 * `routingTable(view)`, computed once per view: every pusher of a replica pushes the same
 * Snapshots, and a target that needs the table as maps (Caddy's) takes it from here.
 */
export const tableOf = cachedPer(routingTable);

/**
 * An App's entry, the same object for the same App object: Snapshots share the App objects a
 * change left alone (src/snapshot/app-table.ts), so a table after a change to one App parses one
 * upstream, not all of them (10k URLs: tens of ms).
 */
export const entryOf = cachedPer(newEntry);

function newEntry(app: RouteApp): TableEntry {
  if (app.state !== "ready") return { kind: "not-routed", app: app.name, reason: app.state };
  return {
    kind: "routed",
    app: app.name,
    upstream: app.upstream === null ? null : headerValue(app.upstream),
    target: upstreamTarget(app.upstream),
    credential: app.credential,
  };
}
