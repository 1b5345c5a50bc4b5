/**
 * The hosts every check asks about (every name the generator can declare, names around its
 * wildcards, unknown names and bad ones) and the random spellings a data plane may send them in.
 */
import type { OutgoingHttpHeaders } from "node:http";
import type { Random } from "../support/random.ts";
import type { Probe } from "./model.ts";

const NAMES = [
  "shop.example.com",
  "blog.example.com",
  "api.example.com",
  "example.com",
  "x.shop.example.com",
  "a.b.example.com",
  "www.other.test",
  "xn--bcher-kva.example",
];
/** Suffixes of the generator's wildcards: each is asked bare, with one label and with two. */
const SUFFIXES = [
  "example.com",
  "shop.example.com",
  "b.example.com",
  "other.test",
  "x.shop.example.com",
  "xn--bcher-kva.example",
];
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
export function spelling(r: Random, probe: Probe): OutgoingHttpHeaders {
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
