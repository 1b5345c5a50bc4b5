import { domainToASCII } from "node:url";
import { err, ok, type Result } from "../result.ts";

/** A hostname as the Registry declares it, after normalisation. */
interface HostnamePattern {
  /** The normalised form: `shop.example.com` or `*.shop.example.com`. */
  readonly pattern: string;
  /** For a wildcard, the suffix it stands above (`shop.example.com`); null for an exact name. */
  readonly wildcardSuffix: string | null;
}

const MAX_HOSTNAME_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
// Gateway API's hostname rule, applied after IDN conversion: DNS-1123 labels, lower-case ASCII.
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Normalises a hostname from the Registry document: lower-case, one trailing dot dropped,
 * IDN to punycode, a leading `*.` label as a wildcard; ports, empty labels, bad characters
 * and names over 253 characters are errors whose message fits after a document path.
 */
export function normaliseHostname(raw: string): Result<HostnamePattern, string> {
  const plain = plainPattern(raw);
  return plain === null ? normaliseAnyHostname(raw) : ok(plain);
}

/**
 * The common case, already normal: lower-case `[a-z0-9-]` labels of 1–63 characters, no '-' at
 * either end, at most a leading `*.`, 253 characters in all. Null for anything else, which
 * `normaliseAnyHostname` decides; the two must agree (test/registry/hostname.test.ts).
 */
function plainPattern(raw: string): HostnamePattern | null {
  const wildcard = raw.startsWith("*.");
  const start = wildcard ? 2 : 0;
  const n = raw.length;
  if (n === start || n > MAX_HOSTNAME_LENGTH) return null;
  let labelStart = start;
  for (let i = start; i <= n; i++) {
    const c = i === n ? 46 : raw.charCodeAt(i);
    if (c === 46) {
      const length = i - labelStart;
      if (length === 0 || length > MAX_LABEL_LENGTH) return null;
      if (raw.charCodeAt(labelStart) === 45 || raw.charCodeAt(i - 1) === 45) return null;
      labelStart = i + 1;
    } else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45)) return null;
  }
  return { pattern: raw, wildcardSuffix: wildcard ? raw.slice(2) : null };
}

/** Every rule of `normaliseHostname`, for any input. */
export function normaliseAnyHostname(raw: string): Result<HostnamePattern, string> {
  if (raw.length === 0) return err("must not be empty");
  let host = raw.endsWith(".") ? raw.slice(0, -1) : raw;
  if (/:\d*$/.test(host) && !host.startsWith("[")) return err("port not allowed");
  if (host.includes("[") || host.includes(":")) return err("IP literals and ports are not allowed");
  const wildcard = host.startsWith("*.");
  if (wildcard) host = host.slice(2);
  if (host.includes("*"))
    return err("a wildcard must be the whole leading label, as in *.example.com");
  const ascii = toAscii(host);
  if (!ascii.ok) return ascii;
  host = ascii.value;
  const labels = checkLabels(host);
  if (!labels.ok) return labels;
  const pattern = wildcard ? `*.${host}` : host;
  if (pattern.length > MAX_HOSTNAME_LENGTH) {
    return err(`must be at most ${MAX_HOSTNAME_LENGTH} characters`);
  }
  return ok({ pattern, wildcardSuffix: wildcard ? host : null });
}

/** Lower-cases, and converts IDN labels to punycode with the WHATWG rules of `node:url`. */
function toAscii(host: string): Result<string, string> {
  // Percent signs would be decoded by domainToASCII ("ex%41mple" becomes "example"); refuse them.
  if (host.includes("%")) return err("invalid character '%'");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is for any non-ASCII byte
  if (/^[\x00-\x7f]*$/.test(host)) return ok(host.toLowerCase());
  const ascii = domainToASCII(host);
  if (ascii === "") return err("not a valid internationalised domain name");
  return ok(ascii);
}

function checkLabels(host: string): Result<true, string> {
  if (host.length === 0) return err("must name a domain");
  const labels = host.split(".");
  for (const label of labels) {
    if (label.length === 0) return err("empty label");
    if (label.length > MAX_LABEL_LENGTH)
      return err(`label longer than ${MAX_LABEL_LENGTH} characters`);
    if (!LABEL.test(label)) {
      return err(
        `invalid label '${label}': lower-case letters, digits and '-' only, not at either end`,
      );
    }
  }
  return ok(true);
}

/** Why a request's host could not be used for a lookup. */
export type BadHost = "empty" | "too-long" | "ip-literal" | "invalid";

/**
 * Normalises the host a data plane sends (Host or X-Forwarded-Host): strips a port, lower-cases,
 * drops one trailing dot and converts IDN; IPv6 literals and anything that is not a hostname are
 * bad hosts. A plain lower-case name without a port returns unchanged, without allocating.
 */
export function normaliseRequestHost(raw: string): Result<string, BadHost> {
  if (isPlainHost(raw)) return ok(raw);
  if (raw.length === 0) return err("empty");
  if (raw.length > MAX_HOSTNAME_LENGTH + 7) return err("too-long");
  if (raw.startsWith("[")) return err("ip-literal");
  let host = raw;
  const colon = host.lastIndexOf(":");
  if (colon !== -1) {
    const port = host.slice(colon + 1);
    if (!/^\d{1,5}$/.test(port) || host.indexOf(":") !== colon) return err("invalid");
    host = host.slice(0, colon);
  }
  if (host.endsWith(".")) host = host.slice(0, -1);
  const ascii = toAscii(host);
  if (!ascii.ok) return err("invalid");
  host = ascii.value;
  if (host.length > MAX_HOSTNAME_LENGTH) return err("too-long");
  if (!checkRequestLabels(host)) return err("invalid");
  return ok(host);
}

/**
 * The hot path: `[a-z0-9.-]`, no leading, trailing or double dot, labels of at most 63 and the
 * name of at most 253 characters. Anything else takes the slow path, which must agree.
 */
function isPlainHost(host: string): boolean {
  const n = host.length;
  if (n === 0 || n > MAX_HOSTNAME_LENGTH) return false;
  let previous = 46; // '.' so a leading dot fails
  let labelStart = 0;
  for (let i = 0; i < n; i++) {
    const c = host.charCodeAt(i);
    const letterOrDigit = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
    if (!letterOrDigit && c !== 45 && c !== 46) return false;
    if (c === 46) {
      if (previous === 46 || i - labelStart > MAX_LABEL_LENGTH) return false;
      labelStart = i + 1;
    }
    previous = c;
  }
  return previous !== 46 && n - labelStart <= MAX_LABEL_LENGTH;
}

function checkRequestLabels(host: string): boolean {
  if (host.length === 0) return false;
  // Request hosts are matched, not declared: accept '_' (seen in real traffic), refuse the rest.
  return host
    .split(".")
    .every((l) => l.length > 0 && l.length <= MAX_LABEL_LENGTH && /^[a-z0-9_-]+$/.test(l));
}
