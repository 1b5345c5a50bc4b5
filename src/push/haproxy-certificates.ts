// HAProxy's certificates by SNI (ADR 56): each App's served certificate, added at run time to the
// crt-list the zero-hop haproxy.cfg binds :8443 with, one crt-list line per App (its SNI names
// as the line's filters), in HAProxy's certificate store under a name of its own beside the
// crt-list. Pure: what HAProxy should hold for a view, and how to read back what it holds.
//
// Names: `<dir of the crt-list>/replica-mirror/<app>.<id>.<names>.pem`, `id` the certificate's
// (16 hex of SHA-256 over its chain), `names` 8 hex of SHA-256 over the line's filters. Not one
// name per App rotated in place (`set ssl cert` + `commit ssl cert` of `<app>.pem`), because:
// - `show ssl crt-list`, one command, then says which certificate HAProxy serves for which names:
//   a whole push diffs against it and a verification reads it back, where names per App would
//   need a `show ssl cert` per App to tell which certificate each holds;
// - a rotation, or a change of an App's names, adds the new line beside the old one and deletes
//   the old one after: both serve the App's names meanwhile (HAProxy takes either for a name two
//   lines share), so no handshake for the App's names gets the default certificate; a crt-list
//   line cannot be edited, and two lines of one certificate name are told apart only by line
//   numbers that shift.
// The files named never exist: a runtime-added certificate lives in HAProxy's memory only.

import { X509Certificate } from "node:crypto";
import { dirname } from "node:path";
import type { ServedCertificate } from "../snapshot/certificate.ts";
import type { PushView } from "../snapshot/types.ts";
import { type CertificateEntry, certificateEntries } from "./certificates.ts";
import { sha256 } from "./table-digest.ts";

/** The crt-list of the shipped zero-hop haproxy.cfg: its first line names the default certificate. */
export const DEFAULT_HAPROXY_CRT_LIST = "/usr/local/etc/haproxy/replica-mirror.crt-list";

/**
 * Bytes of a `set ssl cert` command with its payload (chain and key): HAProxy reads a payload
 * into one buffer of tune.bufsize (16384 by default). The check refuses a certificate whose chain
 * and key pass MAX_SERVED_BYTES (`too-large`, a log line and the App's status), so only a
 * crt-list directory with a name of hundreds of characters could pass this: such a one is left
 * out, its names getting the default certificate.
 */
export const MAX_CERTIFICATE_COMMAND_BYTES = 16_000;

/** Bytes of one crt-list line's SNI filters: an App with more gets a line per group of names. */
const MAX_FILTER_BYTES = 8_000;

/** One line of the crt-list and the certificate it names. */
export interface CrtListLine {
  /** The certificate's name in HAProxy's store (`new ssl cert <name>`). */
  readonly name: string;
  /** The line as `show ssl crt-list` shows it: the name, then the SNI filters. */
  readonly line: string;
  readonly app: string;
  /** Secret bytes inside (its key): never in a message. */
  readonly certificate: ServedCertificate;
}

/** Where the certificates of the sidecar are named for `crtList`: no other name starts so. */
export const certificatePrefix = (crtList: string): string => `${dirname(crtList)}/replica-mirror/`;

/**
 * The lines HAProxy should hold beside the default one for `view`'s certificate entries
 * (certificates.ts), by App, for the crt-list `crtList`; a certificate whose `set ssl cert`
 * would not fit HAProxy's buffer has none. Kept per entry: a rotation renders one App's lines.
 */
export function crtListLines(crtList: string): (view: PushView) => readonly CrtListLine[] {
  const prefix = certificatePrefix(crtList);
  const perEntry = new WeakMap<CertificateEntry, readonly CrtListLine[]>();
  const perList = new WeakMap<readonly CertificateEntry[], readonly CrtListLine[]>();
  return (view) => {
    const entries = certificateEntries(view);
    let lines = perList.get(entries);
    if (lines !== undefined) return lines;
    const out: CrtListLine[] = [];
    for (const entry of entries) {
      let mine = perEntry.get(entry);
      if (mine === undefined) {
        mine = linesOf(prefix, entry);
        perEntry.set(entry, mine);
      }
      out.push(...mine);
    }
    lines = Object.freeze(out);
    perList.set(entries, lines);
    return lines;
  };
}

function linesOf(prefix: string, entry: CertificateEntry): readonly CrtListLine[] {
  const { app, certificate } = entry;
  if (setCommandBytes(prefix, entry) > MAX_CERTIFICATE_COMMAND_BYTES) return [];
  return Object.freeze(
    filterGroups(entry.names).map((names) => {
      const filters = names.join(" ");
      const name = `${prefix}${app}.${certificate.id}.${sha256(filters).slice(0, 8)}.pem`;
      return Object.freeze({ name, line: `${name} ${filters}`, app, certificate });
    }),
  );
}

/** The names in groups whose filters (joined by spaces) fit a crt-list line, in order. */
export function filterGroups(names: readonly string[]): string[][] {
  const out: string[][] = [[]];
  let bytes = 0;
  for (const name of names) {
    if (bytes + name.length + 1 > MAX_FILTER_BYTES && out.at(-1)!.length > 0) {
      out.push([]);
      bytes = 0;
    }
    out.at(-1)!.push(name);
    bytes += name.length + 1;
  }
  return out;
}

/** An upper bound of `setCertificateCommand`'s length for the entry's longest name. */
function setCommandBytes(prefix: string, entry: CertificateEntry): number {
  const { chain, key } = entry.certificate;
  return 64 + prefix.length + entry.app.length + chain.length + key.length;
}

/** `set ssl cert` with the chain and the key as its payload, ended by the empty line. */
export function setCertificateCommand(line: CrtListLine): string {
  const { chain, key } = line.certificate;
  return `set ssl cert ${line.name} <<\n${chain.trimEnd()}\n${key.trimEnd()}\n\n`;
}

/** `add ssl crt-list` of one line, in the payload form (the one that takes SNI filters). */
export const addLineCommand = (crtList: string, line: CrtListLine): string =>
  `add ssl crt-list ${crtList} <<\n${line.line}\n\n`;

const fingerprints = new WeakMap<ServedCertificate, string>();

/** The leaf's SHA-1 fingerprint as `show ssl cert` prints it: hex, upper case, no colons. */
export function fingerprintOf(certificate: ServedCertificate): string {
  let value = fingerprints.get(certificate);
  if (value === undefined) {
    value = new X509Certificate(certificate.chain).fingerprint.replaceAll(":", "");
    fingerprints.set(certificate, value);
  }
  return value;
}

/**
 * The digest of crt-list lines and the fingerprint of the certificate each names; "" for none,
 * whatever the order.
 */
export function certificatesDigest(
  held: readonly { readonly line: string; readonly fingerprint: string }[],
): string {
  if (held.length === 0) return "";
  return sha256(
    held
      .map((h) => `${h.line} ${h.fingerprint}`)
      .sort()
      .join("\n"),
  );
}

/** What `digestOf` covers of `lines`: each line and its certificate's fingerprint. */
export const expectedCertificates = (lines: readonly CrtListLine[]) =>
  lines.map((l) => ({ line: l.line, fingerprint: fingerprintOf(l.certificate) }));

/**
 * The lines under `prefix` of a `show ssl crt-list <crt-list>` answer (the sidecar's; the
 * default and an operator's own lines are not); undefined when the answer is not a crt-list.
 */
export function parseCrtList(answer: string, prefix: string): string[] | undefined {
  const lines = answer.split("\n");
  if (!lines[0]?.startsWith("# ")) return undefined;
  return lines.slice(1).filter((l) => l.startsWith(prefix));
}

/** The answer of `show ssl crt-list` for a crt-list HAProxy does not know. */
export const UNKNOWN_CRT_LIST = "didn't find the specified filename";

/** The names under `prefix` in `show ssl cert`'s list, and the one of an open transaction. */
export function parseStore(
  answer: string,
  prefix: string,
): { readonly names: string[]; readonly transaction: string | null } {
  const names: string[] = [];
  let transaction: string | null = null;
  for (const l of answer.split("\n")) {
    if (l.startsWith("*")) transaction = l.slice(1);
    else if (l.startsWith(prefix)) names.push(l);
  }
  return { names, transaction };
}

/** Each certificate's SHA-1 fingerprint in answers of `show ssl cert <name>`, by name. */
export function parseFingerprints(answer: string): Map<string, string> {
  const out = new Map<string, string>();
  let name: string | null = null;
  for (const l of answer.split("\n")) {
    if (l.startsWith("Filename: ")) name = l.slice("Filename: ".length);
    else if (name !== null && l.startsWith("SHA1 FingerPrint: "))
      out.set(name, l.slice("SHA1 FingerPrint: ".length));
  }
  return out;
}
