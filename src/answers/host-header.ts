import { isVisibleAscii } from "./header-value.ts";

/** `requestHost`'s answer for a request that carries `x-mirror-app`: a data plane routed it. */
export const ROUTED_REQUEST = Symbol("routed-request");

/**
 * The host a request asks about, as the data plane sent it, read from Node's raw header lines
 * (`request.rawHeaders`: name, value, name, value...) in one pass: the first value of
 * X-Forwarded-Host (a comma-separated list, trimmed) when that header is present, else the
 * authority of an absolute-form target (`authority`, RFC 9112 §3.2.2), else Host. The result
 * still needs `lookup` to be parsed; null means the request does not name exactly one usable
 * host. Reading the raw lines, rather than `request.headers`, spares every request the object
 * Node would otherwise build from them.
 *
 * - A request with an `x-mirror-app` line, whatever else it holds, is `ROUTED_REQUEST`: every
 *   shipped data plane sets it on the requests it routes (after dropping the client's) and never
 *   on its own questions, so this one reached the listener as an App's upstream (a name that
 *   resolves to the pod), and its client must not read another App's credential (ADR 53).
 * - A present but empty X-Forwarded-Host yields "" (a bad host), never a fallback to Host: behind
 *   nginx `auth_request` the Host of the subrequest is the sidecar's own address.
 * - Two Host lines are refused (RFC 9112 §3.2), with or without an authority; Node keeps the
 *   first and drops the second silently, so a proxy reading the last would route elsewhere than
 *   the mirror answered for.
 * - Anything outside visible ASCII is refused: Node decodes header bytes as latin1, so a UTF-8
 *   name would arrive mangled; data planes send IDN hosts as punycode.
 */
export function requestHost(
  rawHeaders: readonly string[],
  authority: string | null = null,
): string | null | typeof ROUTED_REQUEST {
  let host: string | undefined;
  let forwarded: string | undefined;
  let twice = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (isHost(name)) {
      if (host !== undefined) twice = true;
      else host = rawHeaders[i + 1]!;
    } else if (forwarded === undefined && isForwardedHost(name)) {
      forwarded = rawHeaders[i + 1]!;
    } else if (isMirrorApp(name)) {
      return ROUTED_REQUEST;
    }
  }
  if (twice) return null;
  if (forwarded !== undefined) {
    const comma = forwarded.indexOf(",");
    host = (comma === -1 ? forwarded : forwarded.slice(0, comma)).trim();
  } else if (authority !== null) {
    host = authority;
  }
  if (host === undefined || !isVisibleAscii(host)) return null;
  return host;
}

// Header names compared case-insensitively by character code: `toLowerCase()` would allocate a
// string per header line of every request.
function isHost(name: string): boolean {
  return name.length === 4 && startsWithFolded(name, "host");
}

function isForwardedHost(name: string): boolean {
  return name.length === 16 && startsWithFolded(name, "x-forwarded-host");
}

function isMirrorApp(name: string): boolean {
  return name.length === 12 && startsWithFolded(name, "x-mirror-app");
}

/** Whether `name` starts with `lower` (lower-case letters and '-'), ignoring ASCII case. */
function startsWithFolded(name: string, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    // Names are tokens (RFC 9110 §5.1): setting 0x20 folds only letters, since the one other
    // byte it maps onto '-' (CR) cannot be in a name.
    if ((name.charCodeAt(i) | 0x20) !== c) return false;
  }
  return true;
}
