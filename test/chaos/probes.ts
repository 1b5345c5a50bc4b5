/**
 * The hosts every check asks about (every name the generator can declare, names around its
 * wildcards, unknown names and bad ones) and the random spellings a data plane may send them in.
 */
import type { Random } from "../support/random.ts";
import { EXACT, WILDCARDS } from "./hosts.ts";
import { normaliseDeclared } from "./model.ts";
import type { Probe } from "./route-answer.ts";

/** The generator's exact names, as a data plane would ask for them. */
const NAMES = EXACT.map(normaliseDeclared);
/** Suffixes of the generator's wildcards: each is asked bare, with one label and with two. */
const SUFFIXES = WILDCARDS.map((w) => normaliseDeclared(w).slice("*.".length));
const UNKNOWN = ["unknown.test", "nothing.example.org", "shop.example.co", "other.test", "com"];
const BAD = [
  "",
  "a..example.com",
  "[::1]",
  "[::1]:8080",
  "shop.example.com:http",
  "shop.example.com:80:80",
  "sh!op.example.com",
  "*.example.com",
  "shop.example.com..",
  ".shop.example.com",
  `${"x".repeat(64)}.example.com`,
  `${"abcdefghi.".repeat(30)}com`,
];

/** Every probe, each once. */
export const PROBES: readonly Probe[] = [
  ...new Set([...NAMES, ...SUFFIXES.flatMap((s) => [s, `w.${s}`, `v.w.${s}`]), ...UNKNOWN]),
]
  .map((host): Probe => ({ raw: host, host }))
  .concat(BAD.map((raw): Probe => ({ raw, host: null })));

/**
 * The request headers for a probe as some data plane would send them: Host, or
 * X-Forwarded-Host (sometimes a list); a valid name in random case, sometimes with a trailing dot
 * or a port, none of which changes the answer.
 */
export function spelling(r: Random, probe: Probe): Record<string, string> {
  let value = probe.raw;
  if (probe.host !== null) {
    value = [...value].map((c) => (r.chance(0.3) ? c.toUpperCase() : c)).join("");
    if (r.chance(0.2)) value += ".";
    if (r.chance(0.2)) value += `:${r.between(1, 65535)}`;
    if (r.chance(0.5)) {
      return { "x-forwarded-host": r.chance(0.2) ? `${value}, proxy.internal` : value };
    }
    return { host: value };
  }
  // An empty Host cannot be sent; an empty X-Forwarded-Host is the same bad host.
  return value === "" || r.chance(0.5) ? { "x-forwarded-host": value } : { host: value };
}
