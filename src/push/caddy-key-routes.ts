// The routes that answer a request whose Host is one of a set of table keys (caddy-routes.ts
// brings it there): the keys of Apps without an answer from their upstream in one `host` matcher
// each kind, and the keys of routed Apps in groups cut along their character trie
// (caddy-partition.ts), each group a `header` matcher of a few prefixes and, unless the group
// shares it, a `map` from key to App, dial, upstream and credential; the group's route sets the
// credential as `Authorization` (when one of its Apps has one) and proxies. The credentials live
// in the routes, so in Caddy's memory and in what the admin API gives back (ADR 53).
//
// Costs on Caddy 2.6, from the smoke measurement: a group tried and missed about 0.15 µs (half
// the groups are tried on average), an entry of a `map` about 10 ns (half of them compared, once
// per field looked up). Groups of about 3 √keys balance the two; inside a subroute, where every
// route also costs its compilation on each request, about 10 √keys. A shared field costs nothing.

import {
  caddyLiteral,
  type Json,
  NO_CREDENTIAL,
  noHttpUpstream,
  notRouted,
  proxyTo,
  setAuthorization,
  stripMirrorHeaders,
} from "./caddy-answers.ts";
import { partitionByPrefix } from "./caddy-partition.ts";
import type { NotRoutedReason, TableEntry } from "./table.ts";

/** How the key routes are cut. */
export interface KeyRoutesOptions {
  /** Most keys in one group; default about 3 √(routed keys), 10 √ inside a subroute. */
  readonly groupSize?: number;
  /** Most prefixes in one group's matcher. */
  readonly groupPatterns?: number;
}

/** The refusals' routes, in this order. */
const REASONS: readonly NotRoutedReason[] = [
  "secret-unavailable",
  "secret-unusable",
  "credentials-off",
];

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
  const refused = new Map<NotRoutedReason, (readonly [string, { app: string }])[]>(
    REASONS.map((reason) => [reason, []]),
  );
  const unroutable: string[] = [];
  for (const [key, entry] of entries) {
    if (entry.kind === "not-routed") refused.get(entry.reason)!.push([key, { app: entry.app }]);
    else if (entry.target === null) unroutable.push(key);
    else {
      const dial = `${entry.target.host}:${entry.target.port}`;
      const credential = entry.credential;
      routed.push([
        key,
        {
          app: entry.app,
          dial,
          upstream: entry.upstream!,
          authorization: credential === null ? NO_CREDENTIAL : "Authorization",
          credential: credential === null ? "" : caddyLiteral(credential),
        },
      ]);
    }
  }
  const routes: Json[] = [];
  for (const [reason, keys] of refused) {
    if (keys.length === 0) continue;
    const found = lookup(keys);
    routes.push({
      match: [{ host: keys.map(([key]) => key) }],
      handle: [...found.handlers, notRouted(reason, found.value.app)],
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
      ? lookup(members.map(([key, { upstream: _, ...rest }]) => [key, rest] as const))
      : lookup(members);
    const { authorization, credential, ...target } = found.value;
    routes.push({
      // One group holds every key: it needs no matcher.
      ...(groups.length > 1 ? { match: [{ header: { Host: group.patterns } }] } : {}),
      // The map first: the headers handler reads its placeholders.
      handle: [
        ...found.handlers,
        authorization === NO_CREDENTIAL
          ? stripMirrorHeaders
          : setAuthorization(authorization, credential),
        proxyTo({ upstream: DIALED_UPSTREAM, ...target, revision }),
      ],
      terminal: true,
    });
  }
  return routes;
}

// A type, not an interface: `lookup` takes it as a record of strings. `authorization` is the header
// the credential goes in (NO_CREDENTIAL: none), `credential` its value as Caddy must read it.
type Routed = {
  readonly app: string;
  readonly dial: string;
  readonly upstream: string;
  readonly authorization: string;
  readonly credential: string;
};

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
