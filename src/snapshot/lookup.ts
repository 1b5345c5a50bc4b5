import { type BadHost, normaliseRequestHost } from "../registry/hostname.ts";
import { allApps, appAt } from "./app-table.ts";
import { slotOf } from "./route-table.ts";
import type { App, RouteView, Snapshot } from "./types.ts";

/** What a Snapshot says about one request host. */
export type LookupResult =
  | {
      readonly kind: "found";
      readonly host: string;
      readonly app: App;
      readonly match: "exact" | "wildcard";
      readonly pattern: string;
    }
  | { readonly kind: "unknown"; readonly host: string }
  | { readonly kind: "bad-host"; readonly reason: BadHost };

/**
 * Finds the App serving a raw request host (port, case and one trailing dot ignored): an exact
 * hostname beats any wildcard; among wildcards the longest suffix wins; a wildcard matches one or
 * more labels above its suffix and never the bare suffix. Conflicts were settled at build time.
 */
export function lookup(snapshot: Snapshot, rawHost: string): LookupResult {
  const normalised = normaliseRequestHost(rawHost);
  if (!normalised.ok) return { kind: "bad-host", reason: normalised.error };
  const host = normalised.value;
  const { exact, wildcard } = snapshot.routes;
  const slot = exact.get(host);
  if (slot !== undefined)
    return { kind: "found", host, app: appAt(snapshot.apps, slot)!, match: "exact", pattern: host };
  const suffix = wildcardSuffix(wildcard, host);
  if (suffix === null) return { kind: "unknown", host };
  const app = appAt(snapshot.apps, wildcard.get(suffix)!)!;
  return { kind: "found", host, app, match: "wildcard", pattern: `*.${suffix}` };
}

/**
 * `lookup` for the data plane's path: only the App's slot (for `appAt`), "unknown" or why the
 * host is bad, with nothing allocated for a name that is already normal. Same rules, same answer.
 */
export function lookupSlot(
  view: Pick<RouteView, "routes">,
  rawHost: string,
): number | "unknown" | BadHost {
  const normalised = normaliseRequestHost(rawHost);
  if (!normalised.ok) return normalised.error;
  const { exact, wildcard } = view.routes;
  const slot = exact.get(normalised.value);
  if (slot !== undefined) return slot;
  const suffix = wildcardSuffix(wildcard, normalised.value);
  return suffix === null ? "unknown" : wildcard.get(suffix)!;
}

/** The longest wildcard suffix above which `host` sits, or null. */
function wildcardSuffix(wildcard: ReadonlyMap<string, number>, host: string): string | null {
  if (wildcard.size === 0) return null;
  // Strip one leading label at a time: the first suffix found is the longest.
  for (let dot = host.indexOf("."); dot !== -1; dot = host.indexOf(".", dot + 1)) {
    const suffix = host.slice(dot + 1);
    if (wildcard.has(suffix)) return suffix;
  }
  return null;
}

/** The App with this name, if the Snapshot has one. */
export function findApp(snapshot: Snapshot, name: string): App | undefined {
  const slot = slotOf(snapshot.routes, name);
  return slot === undefined ? undefined : appAt(snapshot.apps, slot);
}

/** Every App of the Snapshot, sorted by name. */
export function listApps(snapshot: Snapshot): App[] {
  return [...allApps(snapshot.apps)];
}
