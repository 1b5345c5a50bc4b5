// The routes that bring a request's Host to a table key before the lookup routes
// (caddy-routes.ts), so that the lookup itself can be an exact match on the Host:
//
// - normaliseRoute: a Host with a port, a trailing dot or an upper-case letter is checked and
//   rewritten to its normal form (the client's kept in `mirror_host`), or answered 400 bad-host;
// - missRoute: a Host that is no exact name is checked (400 bad-host), then each wildcard depth
//   of the table, deepest first, is tried by writing the Host's last labels as that depth's key
//   (`~suffix`) and matching it against the depth's keys; the key found stays the Host for the
//   wildcard keys' routes, which answer inside this route, and no key at all is 404.
//
// Regular expressions, label placeholders and subroutes (compiled on every request) live here,
// off the path of a Host that is already an exact name.

import { badHost, type Json, unknownHost } from "./caddy-answers.ts";

/** What starts a wildcard key: a byte no request Host that reaches a lookup holds. */
export const WILDCARD_MARK = "~";

/** The table key of wildcard suffix `suffix` (`shop.example.com` for `*.shop.example.com`). */
export const wildcardKey = (suffix: string): string => `${WILDCARD_MARK}${suffix}`;

// `/v1/route`'s host rules (src/registry/hostname.ts) as Go regular expressions: labels of
// letters, digits, '-' and '_', 1 to 63 each; a port of 1 to 5 digits; one trailing dot.
const LABELS = "(?:[a-z0-9_-]{1,63}\\.)*[a-z0-9_-]{1,63}";
const ANY_CASE_LABELS = "(?:[A-Za-z0-9_-]{1,63}\\.)*[A-Za-z0-9_-]{1,63}";
const PORT = "(?::[0-9]{1,5})?";
// A name whose last label is a number (digits, or 0x and hex digits) is an IPv4 literal.
const ENDS_IN_A_NUMBER = "(?:^|\\.)(?:[0-9]+|0x[0-9a-f]*)$";
const hostMatches = (pattern: string): Json => ({ header_regexp: { Host: { pattern } } });

// A Host needs normalising when it holds a port, ends with a dot or has an upper-case letter;
// a bracket is refused there, before a `host` matcher would take "[name]" for "name".
const NOT_NORMAL = [
  "*:*",
  "*.",
  "*[*",
  "*]*",
  ...Array.from({ length: 26 }, (_, i) => `*${String.fromCharCode(65 + i)}*`),
];

/** Rewrites a valid Host that is not in normal form to it, or answers 400 bad-host. */
export function normaliseRoute(): Json {
  const setHost = (value: string): Json => ({
    handler: "headers",
    request: { set: { Host: [value] } },
  });
  const rewriteUri = (uri: string): Json => ({ handler: "rewrite", uri });
  const lowerCase = Array.from({ length: 26 }, (_, i) => ({
    find: String.fromCharCode(65 + i),
    replace: String.fromCharCode(97 + i),
  }));
  const group = "mirror_normalise";
  return {
    match: [{ header: { Host: NOT_NORMAL } }],
    handle: [
      {
        handler: "subroute",
        routes: [
          { handle: [{ handler: "vars", mirror_host: "{http.request.hostport}" }] },
          // Lower case already: only the port goes.
          {
            match: [hostMatches(`^${LABELS}${PORT}$`)],
            handle: [setHost("{http.request.host}")],
            group,
          },
          // Caddy has no lower-case function: the name goes through the path, where
          // `uri_substring` can replace letters, and the request's URI is put back after.
          {
            match: [hostMatches(`^${ANY_CASE_LABELS}\\.?${PORT}$`)],
            handle: [
              rewriteUri("/{http.request.host}"),
              { handler: "rewrite", uri_substring: lowerCase, strip_path_suffix: "." },
              setHost("{http.request.uri.path.0}"),
              rewriteUri("{http.request.orig_uri}"),
            ],
            group,
          },
          { handle: [badHost], group },
          { handle: [{ handler: "vars", mirror_key: "{http.request.hostport}" }] },
        ],
      },
    ],
  };
}

/**
 * For a Host (normal form, no port) that is none of `exact`: 400 bad-host, `keyRoutes` run on the
 * key of the deepest wildcard depth whose keys (`wildcards`, by number of labels) hold its
 * suffix, or 404. Terminal: no such Host goes on to the exact names' routes.
 */
export function missRoute(
  exact: readonly string[],
  wildcards: ReadonlyMap<number, readonly string[]>,
  keyRoutes: readonly Json[],
): Json {
  const routes: Json[] = [
    {
      match: [
        { not: [hostMatches(`^${LABELS}$`)] },
        hostMatches("^.{254,}$"),
        hostMatches(ENDS_IN_A_NUMBER),
      ],
      handle: [badHost],
    },
  ];
  const depths = [...wildcards.keys()].sort((a, b) => b - a);
  if (depths.length === 0) routes.push({ handle: [unknownHost] });
  else routes.push(...wildcardSearch(depths, wildcards), notFound, ...keyRoutes);
  return {
    ...(exact.length > 0 ? { match: [{ not: [{ host: exact }] }] } : {}),
    handle: [{ handler: "subroute", routes }],
    terminal: true,
  };
}

const notFound: Json = { match: [{ vars: { mirror_found: [""] } }], handle: [unknownHost] };

function wildcardSearch(
  depths: readonly number[],
  wildcards: ReadonlyMap<number, readonly string[]>,
): Json[] {
  const label = (i: number) => `{http.request.host.labels.${i}}`;
  const keyOf = (depth: number) =>
    wildcardKey(Array.from({ length: depth }, (_, i) => label(depth - 1 - i)).join("."));
  // Every depth's label and key are read from the Host before any of them replaces it.
  const read: Record<string, string> = { mirror_found: "" };
  for (const depth of depths) {
    read[`mirror_l${depth}`] = label(depth);
    read[`mirror_k${depth}`] = keyOf(depth);
  }
  return [
    {
      handle: [
        // The client's Host, unless the normalising route kept it already: `mirror_host` is
        // unset ("") when the Host came as it is.
        {
          handler: "map",
          source: "{http.vars.mirror_host}",
          destinations: ["{mirror_client_host}"],
          mappings: [{ input: "", outputs: ["{http.request.hostport}"] }],
          defaults: ["{http.vars.mirror_host}"],
        },
        { handler: "vars", mirror_host: "{mirror_client_host}", ...read },
      ],
    },
    ...depths.flatMap((depth) => [
      // A label above the suffix: a wildcard never serves its bare suffix.
      {
        match: [{ vars: { mirror_found: [""] }, not: [{ vars: { [`mirror_l${depth}`]: [""] } }] }],
        handle: [
          { handler: "headers", request: { set: { Host: [`{http.vars.mirror_k${depth}}`] } } },
        ],
      },
      {
        match: [{ vars: { mirror_found: [""] }, host: wildcards.get(depth)! }],
        handle: [
          { handler: "vars", mirror_found: "1", mirror_key: `{http.vars.mirror_k${depth}}` },
        ],
      },
    ]),
  ];
}
