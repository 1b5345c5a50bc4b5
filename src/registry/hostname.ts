import { domainToASCII } from "node:url";
import { err, ok, type Result } from "../result.ts";

/** Why a request's host could not be used for a lookup. */
export type BadHost = "empty" | "too-long" | "ip-literal" | "invalid";

const MAX_HOSTNAME_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

/**
 * What a label may hold. Declared names follow Gateway API's hostname rule (DNS-1123 labels,
 * after IDN conversion); request hosts are matched, not declared, so they may also hold '_'
 * (seen in real traffic) and '-' at either end.
 */
interface LabelRules {
  readonly underscore: boolean;
  readonly hyphenAtEnds: boolean;
}

const DECLARED: LabelRules = { underscore: false, hyphenAtEnds: false };
const REQUESTED: LabelRules = { underscore: true, hyphenAtEnds: true };

/** What one pass over a name found: fine (and whether it has upper-case letters), or the first problem. */
type Scan =
  | { readonly kind: "fine"; readonly upper: boolean }
  | { readonly kind: "non-ascii" }
  | { readonly kind: "empty-label" }
  | { readonly kind: "long-label" }
  /** `label`: which label, counting from 1: a message names a position, never a quote. */
  | { readonly kind: "bad-label"; readonly label: number };

/**
 * Checks every label of `name` against `rules` in one pass, ASCII letters of either case
 * accepted. A non-ASCII character wins over any label problem: the name must be converted
 * (IDN) before its labels mean anything. Allocates nothing for a good name.
 */
function scanName(name: string, rules: LabelRules, from = 0, to = name.length): Scan {
  let upper = false;
  let problem: Scan | null = null;
  let start = from;
  let label = 1;
  for (let i = from; i <= to; i++) {
    const c = i === to ? 46 : name.charCodeAt(i);
    if (c > 0x7f) return { kind: "non-ascii" };
    if (problem !== null) continue;
    if (c === 46) {
      const length = i - start;
      if (length === 0) problem = { kind: "empty-label" };
      else if (length > MAX_LABEL_LENGTH) problem = { kind: "long-label" };
      else if (
        !rules.hyphenAtEnds &&
        (name.charCodeAt(start) === 45 || name.charCodeAt(i - 1) === 45)
      )
        problem = { kind: "bad-label", label };
      start = i + 1;
      label++;
    } else if (c >= 65 && c <= 90) {
      upper = true;
    } else if (
      !((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || (c === 95 && rules.underscore))
    ) {
      problem = { kind: "bad-label", label };
    }
  }
  return problem ?? { kind: "fine", upper };
}

/**
 * A name with its labels checked, lower-cased and IDN labels converted to punycode (WHATWG rules
 * of `node:url`): the name itself when it is already normal. `%` is refused before conversion,
 * which would decode it ("ex%41mple" becomes "example").
 */
function normaliseName(
  name: string,
  rules: LabelRules,
): Result<string, Exclude<Scan, { kind: "fine" }> | "percent" | "idn"> {
  if (name.includes("%")) return err("percent");
  const scan = scanName(name, rules);
  if (scan.kind === "fine") return ok(scan.upper ? name.toLowerCase() : name);
  if (scan.kind !== "non-ascii") return err(scan);
  const ascii = domainToASCII(name);
  if (ascii === "") return err("idn");
  const again = scanName(ascii, rules);
  return again.kind === "fine" ? ok(ascii) : err(again);
}

/**
 * Normalises a hostname from the Registry document to its pattern: lower-case, one trailing dot
 * dropped, IDN to punycode, a leading `*.` label for a wildcard (`*.shop.example.com`); ports,
 * empty labels, bad characters and names over 253 characters are errors whose message fits
 * after a document path. A name already in normal form is returned as it is.
 */
export function normaliseHostname(raw: string): Result<string, string> {
  // The common case: one pass finds the labels good, which rules out every character the steps
  // below look for (ports, brackets, '*', '%', non-ASCII).
  const from = raw.startsWith("*.") ? 2 : 0;
  if (raw.length > from && raw.length <= MAX_HOSTNAME_LENGTH) {
    const scan = scanName(raw, DECLARED, from);
    if (scan.kind === "fine" && !scan.upper) return named(raw);
  }
  if (raw.length === 0) return err("must not be empty");
  let host = raw.endsWith(".") ? raw.slice(0, -1) : raw;
  if (/:\d*$/.test(host) && !host.startsWith("[")) return err("port not allowed");
  if (host.includes("[") || host.includes(":")) return err("IP literals and ports are not allowed");
  const wildcard = host.startsWith("*.");
  if (wildcard) host = host.slice(2);
  if (host.includes("*"))
    return err("a wildcard must be the whole leading label, as in *.example.com");
  if (host.length === 0) return err("must name a domain");
  const name = normaliseName(host, DECLARED);
  if (!name.ok) return err(declaredProblem(name.error));
  const pattern = wildcard ? `*.${name.value}` : name.value;
  if (pattern.length > MAX_HOSTNAME_LENGTH)
    return err(`must be at most ${MAX_HOSTNAME_LENGTH} characters`);
  return named(pattern);
}

/**
 * `pattern`, valid and in normal form, if it is a name a client reaches by name (ADR 48): not an
 * IPv4 address in any spelling a URL parser accepts (its last label is a number: `10.0.0.12`,
 * `127.1`, `*.0.0.12`), not under `localhost`, not a wildcard over a single label (`*.com`).
 */
function named(pattern: string): Result<string, string> {
  if (lastLabelIsNumber(pattern, pattern.lastIndexOf(".") + 1, pattern.length))
    return err(
      "its last label is a number, so URL parsers read it as an IPv4 address: not a hostname",
    );
  if (pattern === "localhost" || pattern.endsWith(".localhost"))
    return err("localhost and the names under it are not allowed");
  if (pattern.startsWith("*.") && pattern.indexOf(".", 2) === -1)
    return err("a wildcard must cover at least two labels, as in *.example.com");
  return ok(pattern);
}

/**
 * Whether `text[from, to)`, one lower-case label, is a number to WHATWG's IPv4 parser: decimal
 * digits, or `0x` and hex digits (none at all reads as zero). A host whose last label is a number
 * is parsed as an IPv4 address (`127.1`, `0x7f.1`, `2130706433`), or refused when it is not one.
 */
export function lastLabelIsNumber(text: string, from: number, to: number): boolean {
  if (to <= from) return false;
  let i = from;
  const hex = to - from >= 2 && text.charCodeAt(from) === 48 && text.charCodeAt(from + 1) === 120;
  if (hex) i += 2;
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (hex && c >= 97 && c <= 102))) return false;
  }
  return true;
}

function declaredProblem(problem: Exclude<Scan, { kind: "fine" }> | "percent" | "idn"): string {
  if (problem === "percent") return "invalid character '%'";
  if (problem === "idn") return "not a valid internationalised domain name";
  switch (problem.kind) {
    case "empty-label":
      return "empty label";
    case "long-label":
      return `label longer than ${MAX_LABEL_LENGTH} characters`;
    case "bad-label":
      return `label ${problem.label} is not valid: lower-case letters, digits and '-' only, not at either end`;
    case "non-ascii":
      return "not a valid internationalised domain name";
  }
}

/**
 * Normalises the host a data plane sends (Host or X-Forwarded-Host): strips a port, lower-cases,
 * drops one trailing dot and converts IDN; IPv6 literals, a name whose last label is a number
 * (an IPv4 address to a URL parser: no Registry hostname is one) and anything that is not a
 * hostname are bad hosts. A plain lower-case name without a port returns unchanged, without
 * allocating.
 */
export function normaliseRequestHost(raw: string): Result<string, BadHost> {
  if (raw.length === 0) return err("empty");
  if (raw.length > MAX_HOSTNAME_LENGTH + 7) return err("too-long");
  if (raw.charCodeAt(0) === 91 /* [ */) return err("ip-literal");
  let host = raw;
  const colon = host.lastIndexOf(":");
  if (colon !== -1) {
    if (!/^\d{1,5}$/.test(host.slice(colon + 1)) || host.indexOf(":") !== colon)
      return err("invalid");
    host = host.slice(0, colon);
  }
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (host.length === 0) return err("invalid");
  const name = normaliseName(host, REQUESTED);
  if (!name.ok) return err("invalid");
  const value = name.value;
  if (value.length > MAX_HOSTNAME_LENGTH) return err("too-long");
  if (lastLabelIsNumber(value, value.lastIndexOf(".") + 1, value.length)) return err("ip-literal");
  return ok(value);
}
