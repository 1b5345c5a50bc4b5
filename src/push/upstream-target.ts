/** Where a proxy sends an App's requests: `http://host[:port]`, read from the App's `upstream`. */
export interface UpstreamTarget {
  /** A DNS name or an IPv4 literal, as written in the Registry. */
  readonly host: string;
  readonly port: number;
  /** True when `host` is an IPv4 literal: the proxy connects without resolving it. */
  readonly literal: boolean;
}

// The shape the hop-mode configurations route (README, "Data-plane configurations"): plain HTTP,
// a host, an optional port, nothing after an optional slash. The host is held to DNS characters
// so that it can travel inside a proxy's table entry and into its resolver unescaped.
const HTTP_UPSTREAM = /^http:\/\/([A-Za-z0-9._-]+)(?::(\d{1,5}))?\/?$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * The target of an `upstream` a proxy can route to (`http://host[:port]`, port 80 when left out,
 * 1–65535), or null for anything else (absent, HTTPS, a path, userinfo): the proxy then answers
 * 502 `app has no http upstream`, as the hop-mode configurations do.
 */
export function upstreamTarget(upstream: string | null): UpstreamTarget | null {
  if (upstream === null) return null;
  const m = HTTP_UPSTREAM.exec(upstream);
  if (m === null) return null;
  const host = m[1]!;
  const port = m[2] === undefined ? 80 : Number(m[2]);
  if (port < 1 || port > 65_535) return null;
  const ip = IPV4.exec(host);
  const literal = ip?.slice(1).every((octet) => Number(octet) <= 255) ?? false;
  return { host, port, literal };
}
