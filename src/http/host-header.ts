import type { IncomingHttpHeaders } from "node:http";

/**
 * The host a request asks about, as the data plane sent it: the first value of X-Forwarded-Host
 * (a comma-separated list, trimmed) when that header is present, else Host. The result still
 * needs `lookup` to be parsed; null means the request does not name exactly one usable host.
 *
 * - A present but empty X-Forwarded-Host yields "" (a bad host), never a fallback to Host: behind
 *   nginx `auth_request` the Host of the subrequest is the sidecar's own address.
 * - Two Host lines are refused (RFC 9112 §3.2); Node keeps the first and drops the second
 *   silently, so a proxy reading the last would route elsewhere than the mirror answered for.
 * - Anything outside visible ASCII is refused: Node decodes header bytes as latin1, so a UTF-8
 *   name would arrive mangled; data planes send IDN hosts as punycode.
 */
export function requestHost(
  headers: IncomingHttpHeaders,
  rawHeaders: readonly string[],
): string | null {
  if (hasDuplicateHost(rawHeaders)) return null;
  const forwarded = headers["x-forwarded-host"];
  let host: string | undefined;
  if (forwarded !== undefined) {
    const value = typeof forwarded === "string" ? forwarded : (forwarded[0] ?? "");
    const comma = value.indexOf(",");
    host = (comma === -1 ? value : value.slice(0, comma)).trim();
  } else {
    host = headers.host;
  }
  if (host === undefined || !isVisibleAscii(host)) return null;
  return host;
}

function hasDuplicateHost(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (isHost(rawHeaders[i]!)) {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

// Case-insensitive "host" without the string toLowerCase() would allocate on every request.
function isHost(name: string): boolean {
  return (
    name.length === 4 &&
    (name.charCodeAt(0) | 0x20) === 0x68 &&
    (name.charCodeAt(1) | 0x20) === 0x6f &&
    (name.charCodeAt(2) | 0x20) === 0x73 &&
    (name.charCodeAt(3) | 0x20) === 0x74
  );
}

function isVisibleAscii(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}
