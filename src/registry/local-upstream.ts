// Which `upstream` values point a proxy back at the pod, the node or the cloud's metadata
// service: loopback, unspecified and link-local addresses, and the names that always mean
// loopback. The sidecar's ops port and a proxy's push channel listen there, so a tenant's App
// routed to one would steer the proxy at its own control plane (ADR 48).

import { lastLabelIsNumber } from "./hostname.ts";

/** The kind of local address an upstream names. */
export type LocalAddress = "loopback" | "unspecified" | "link-local";

/** Schemes whose URLs have WHATWG hosts: IPv4 spellings are canonicalised, names lower-cased. */
const SPECIAL = new Set(["http:", "https:", "ws:", "wss:", "ftp:"]);

/**
 * The kind of local address `upstream`'s host is, or null. Judged on the host a WHATWG URL parser
 * reads (`127.1`, `0x7f.1`, `2130706433` and `[::ffff:127.0.0.1]` are loopback), whatever the
 * scheme; a value with no `//`, or starting with it, is also read as an http URL. A value that
 * parses in neither way names no host, and is not local.
 */
export function localUpstream(upstream: string): LocalAddress | null {
  return isPlainName(upstream) ? null : localHost(canonicalHost(upstream));
}

/** The host of `upstream` in WHATWG's canonical form, or null when it names none. */
export function canonicalHost(upstream: string): string | null {
  const url = URL.parse(upstream);
  if (url !== null && url.hostname !== "") {
    if (SPECIAL.has(url.protocol)) return url.hostname;
    // An opaque host is kept as written: read it as an http host to canonicalise it.
    return URL.parse(`http://${url.hostname}`)?.hostname ?? url.hostname.toLowerCase();
  }
  // A value with no authority of its own: a data plane reading a bare `host:port` or a
  // scheme-relative `//host:port` would connect to that host.
  const authority = upstream.startsWith("//")
    ? upstream
    : upstream.includes("//")
      ? null
      : `//${upstream}`;
  if (authority === null) return null;
  const bare = URL.parse(`http:${authority}`);
  return bare === null || bare.hostname === "" ? null : bare.hostname;
}

/** The kind of local address a canonical host is, or null. */
function localHost(host: string | null): LocalAddress | null {
  if (host === null) return null;
  if (host.startsWith("[")) {
    const groups = ipv6Groups(host.slice(1, -1));
    return groups === null ? null : ipv6Kind(groups);
  }
  const v4 = ipv4Of(host);
  if (v4 !== null) return ipv4Kind(v4);
  let end = host.length;
  while (end > 0 && host.charCodeAt(end - 1) === 46) end--;
  const name = host.slice(0, end);
  // nginx reads `http://unix:...` as a Unix socket of its own host, whatever follows.
  if (name === "unix") return "loopback";
  return name === "localhost" || name.endsWith(".localhost") ? "loopback" : null;
}

function ipv4Kind(address: number): LocalAddress | null {
  const first = address >>> 24;
  if (first === 127) return "loopback";
  // 0.0.0.0/8, "this network": 0.0.0.0 reaches the local host on Linux; no address in it is a
  // destination anywhere else.
  if (first === 0) return "unspecified";
  if (address >>> 16 === 0xa9fe) return "link-local";
  return null;
}

function ipv6Kind(g: readonly number[]): LocalAddress | null {
  const upperZero = g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0;
  if (upperZero && g[5] === 0) {
    if (g[6] === 0 && g[7] === 0) return "unspecified";
    if (g[6] === 0 && g[7] === 1) return "loopback";
    // The deprecated IPv4-compatible form (::a.b.c.d): judged as the address it embeds, for a
    // stack that still maps it.
    return ipv4Kind(((g[6]! << 16) | g[7]!) >>> 0);
  }
  // IPv4-mapped (::ffff:a.b.c.d): a dual-stack socket connects to the IPv4 address.
  if (upperZero && g[5] === 0xffff) return ipv4Kind(((g[6]! << 16) | g[7]!) >>> 0);
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local";
  return null;
}

/** A dotted-quad IPv4 address as a number (WHATWG serialises every IPv4 host so), or null. */
function ipv4Of(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4) return null;
  let address = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    address = address * 256 + Number(part);
  }
  return address;
}

/** The eight 16-bit groups of an IPv6 address (`::` and a final dotted quad allowed), or null. */
function ipv6Groups(text: string): number[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const side = (s: string): number[] | null => {
    if (s === "") return [];
    const out: number[] = [];
    const pieces = s.split(":");
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = ipv4Of(piece);
        if (v4 === null) return null;
        out.push(v4 >>> 16, v4 & 0xffff);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        out.push(Number.parseInt(piece, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = side(halves[0]!);
  const tail = halves.length === 2 ? side(halves[1]!) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/**
 * Whether `upstream` is plainly `http(s)://name[:port]` followed by nothing or a path, query or
 * fragment, where `name` is lower-case `[a-z0-9.-]` whose last label is not a number and which is
 * not under `localhost`: almost every upstream. For these, WHATWG's parser returns the name
 * unchanged as a domain, so the full parse (about four times the cost) would say "not local".
 */
function isPlainName(upstream: string): boolean {
  let i = upstream.startsWith("http://") ? 7 : upstream.startsWith("https://") ? 8 : -1;
  if (i === -1) return false;
  const start = i;
  let label = i;
  for (; i < upstream.length; i++) {
    const c = upstream.charCodeAt(i);
    if (c === 46 /* . */) label = i + 1;
    else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45)) break;
  }
  const end = i;
  if (end === start || label === end) return false;
  if (end - start === 4 && upstream.startsWith("unix", start)) return false;
  if (i < upstream.length && upstream.charCodeAt(i) === 58 /* : */) {
    const port = ++i;
    while (i < upstream.length && isDigit(upstream.charCodeAt(i))) i++;
    if (i === port || i - port > 5) return false;
  }
  if (i < upstream.length) {
    const c = upstream.charCodeAt(i);
    if (c !== 47 && c !== 63 && c !== 35 /* / ? # */) return false;
  }
  if (lastLabelIsNumber(upstream, label, end)) return false;
  // Not `localhost` nor a name under it, compared in place: no slice per upstream.
  return (
    !upstream.endsWith("localhost", end) ||
    (end - start > 9 && upstream.charCodeAt(end - 10) !== 46)
  );
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
