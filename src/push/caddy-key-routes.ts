// The routes that answer a request whose Host is one of a set of table keys (caddy-routes.ts
// brings it there): the keys of Apps without an answer from their upstream in one `host` matcher
// each kind, and the keys of routed Apps in groups cut along their character trie
// (caddy-partition.ts), each group a `header` matcher of a few prefixes and, unless the group
// shares it, a `map` from key to App, dial and upstream; the group's route proxies.
//
// Costs on Caddy 2.6, from the smoke measurement: a group tried and missed about 0.15 µs (half
// the groups are tried on average), an entry of a `map` about 10 ns (half of them compared, once
// per field looked up). Groups of about 3 √keys balance the two; inside a subroute, where every
// route also costs its compilation on each request, about 10 √keys. A shared field costs nothing.

import {
  type Json,
  noHttpUpstream,
  proxyTo,
  secretUnavailable,
  stripMirrorHeaders,
} from "./caddy-answers.ts";
import { partitionByPrefix } from "./caddy-partition.ts";
import { type TableEntry, unavailableToProxies } from "./table.ts";

/** How the key routes are cut. */
export interface KeyRoutesOptions {
  /** Most keys in one group; default about 3 √(routed keys), 10 √ inside a subroute. */
  readonly groupSize?: number;
  /** Most prefixes in one group's matcher. */
  readonly groupPatterns?: number;
}

/**
 * Terminal routes answering every key of `entries` (sorted by key, code-unit order) with its
 * entry: a request whose Host is no key must not reach them, as a group matches by prefix.
 * `inSubroute` when they run inside a subroute, which compiles them on every request.
 */
export function keyRoutes(
  entries: readonly (readonly [string, TableEntry])[],
  revision: string,
  options: KeyRoutesOptions = {},
  inSubroute = false,
): Json[] {
  const routed: (readonly [string, Routed])[] = [];
  const unavailable: (readonly [string, { app: string }])[] = [];
  const unroutable: string[] = [];
  for (const [key, entry] of entries) {
    if (unavailableToProxies(entry)) unavailable.push([key, { app: entry.app }]);
    else if (entry.target === null) unroutable.push(key);
    else {
      const dial = `${entry.target.host}:${entry.target.port}`;
      routed.push([key, { app: entry.app, dial, upstream: entry.upstream! }]);
    }
  }
  const routes: Json[] = [];
  if (unavailable.length > 0) {
    const found = lookup(unavailable);
    routes.push({
      match: [{ host: unavailable.map(([key]) => key) }],
      handle: [...found.handlers, secretUnavailable(found.value.app)],
      terminal: true,
    });
  }
  if (unroutable.length > 0)
    routes.push({ match: [{ host: unroutable }], handle: [noHttpUpstream], terminal: true });
  const perRoot = inSubroute ? 10 : 3;
  const size = options.groupSize ?? Math.max(16, Math.round(perRoot * Math.sqrt(routed.length)));
  const byKey = new Map(routed);
  const groups = partitionByPrefix(
    routed.map(([key]) => key),
    size,
    options.groupPatterns ?? 8,
  );
  for (const group of groups) {
    const members = group.keys.map((key) => [key, byKey.get(key)!] as const);
    const found = dialedUpstreams(members)
      ? lookup(members.map(([key, { app, dial }]) => [key, { app, dial }] as const))
      : lookup(members);
    routes.push({
      // One group holds every key: it needs no matcher.
      ...(groups.length > 1 ? { match: [{ header: { Host: group.patterns } }] } : {}),
      handle: [
        stripMirrorHeaders,
        ...found.handlers,
        proxyTo({ upstream: DIALED_UPSTREAM, ...found.value, revision }),
      ],
      terminal: true,
    });
  }
  return routes;
}

// A type, not an interface: `lookup` takes it as a record of strings.
type Routed = { readonly app: string; readonly dial: string; readonly upstream: string };

/** `x-mirror-upstream` of an upstream written `http://host:port`: the address dialled. */
const DIALED_UPSTREAM = "http://{http.reverse_proxy.upstream.hostport}";

/** Whether the dials differ and each upstream is `http://` and its dial: the map can leave it out. */
function dialedUpstreams(members: readonly (readonly [string, Routed])[]): boolean {
  const first = members[0]![1].dial;
  return (
    members.some(([, e]) => e.dial !== first) &&
    members.every(([, e]) => e.upstream === `http://${e.dial}`)
  );
}

/**
 * Each field of `entries`' values as a constant when all share it, else as the placeholder of a
 * `map` from the Host (a key by now) to it; `handlers` holds that map, if any.
 */
function lookup<T extends Readonly<Record<string, string>>>(
  entries: readonly (readonly [string, T])[],
): { handlers: Json[]; value: { [K in keyof T]: string } } {
  const first = entries[0]![1];
  const fields = Object.keys(first) as (keyof T & string)[];
  const varying = fields.filter((f) => entries.some(([, e]) => e[f] !== first[f]));
  const value = Object.fromEntries(
    fields.map((f) => [f, varying.includes(f) ? `{mirror_${f}}` : first[f]]),
  ) as { [K in keyof T]: string };
  if (varying.length === 0) return { handlers: [], value };
  const map = {
    handler: "map",
    source: "{http.request.hostport}",
    destinations: varying.map((f) => `{mirror_${f}}`),
    mappings: entries.map(([input, e]) => ({ input, outputs: varying.map((f) => e[f]) })),
  };
  return { handlers: [map], value };
}
