// Whether an App's `kubernetes.io/tls` Secret holds a certificate a proxy may serve for its
// hostnames (ADR 56, docs/serving.md "Certificates"), and the form every proxy gets it in.
// Deterministic given its inputs and `now`; the Secret's bytes are one character per byte.

import { createHash, createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { err, ok, type Result } from "../result.ts";

/** The keys of a `kubernetes.io/tls` Secret. */
export const TLS_CERT_KEY = "tls.crt";
export const TLS_KEY_KEY = "tls.key";

/** Bytes of `tls.crt` (a chain of a few certificates) and of `tls.key`: past these, refused. */
export const MAX_CHAIN_BYTES = 65_536;
export const MAX_KEY_BYTES = 16_384;
/**
 * Bytes of the chain and key together as a proxy gets them: HAProxy's runtime API reads a
 * certificate in one buffer of `tune.bufsize` (16 KiB), its command line included.
 */
export const MAX_SERVED_BYTES = 15_000;

/** A certificate checked and ready for a proxy. The key is Secret bytes: never logged or shown. */
export interface ServedCertificate {
  /** The chain, leaf first, each certificate re-encoded as PEM (no blank line, no text between). */
  readonly chain: string;
  /** The private key as unencrypted PKCS#8 PEM. Secret bytes. */
  readonly key: string;
  /** 16 hex digits of SHA-256 over `chain`: the name a proxy keeps it under, the same on every replica. */
  readonly id: string;
  /** The leaf's serial number, hex, as `openssl x509 -serial` prints it. */
  readonly serial: string;
  /** Milliseconds since the epoch. */
  readonly notBefore: number;
  readonly notAfter: number;
  /** The Secret's resourceVersion it was read from. */
  readonly resourceVersion: string;
}

/** Why a Secret's certificate is not served (the last good one of the App stays, if any). */
export type CertificateRule =
  | "secret-absent"
  | "key-missing"
  | "not-a-certificate"
  | "not-a-key"
  | "key-mismatch"
  | "not-yet-valid"
  | "expired"
  | "hostname-not-covered"
  | "too-large";

/** What each rule says, for a log line and the status API; never the Secret's bytes. */
export const CERTIFICATE_RULES: Readonly<Record<CertificateRule, string>> = {
  "secret-absent": "the TLS Secret does not exist",
  "key-missing": `the TLS Secret lacks ${TLS_CERT_KEY} or ${TLS_KEY_KEY}`,
  "not-a-certificate": `${TLS_CERT_KEY} is not a PEM certificate chain of at most ${MAX_CHAIN_BYTES} bytes`,
  "not-a-key": `${TLS_KEY_KEY} is not an unencrypted PEM private key of at most ${MAX_KEY_BYTES} bytes`,
  "key-mismatch": `${TLS_KEY_KEY} is not the key of the certificate`,
  "not-yet-valid": "the certificate is not valid yet",
  expired: "the certificate has expired",
  "hostname-not-covered": "a hostname of the App is not among the certificate's DNS names",
  "too-large": `the chain and key are over ${MAX_SERVED_BYTES} bytes as PEM`,
};

/** A refusal: the rule, and for `hostname-not-covered` the first hostname left out. */
export interface CertificateRefusal {
  readonly rule: CertificateRule;
  readonly hostname?: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Checks the `tls.crt` and `tls.key` values of a Secret for an App with these hostnames
 * (normalised, `*.suffix` for a wildcard) at `now`: the chain parses, the key is the leaf's, the
 * leaf is within its validity, and each hostname is one of its DNS names (an exact hostname may
 * be covered by a wildcard name one label up; a wildcard hostname only by the same wildcard).
 */
export function checkCertificate(
  chainValue: string,
  keyValue: string,
  hostnames: readonly string[],
  now: number,
  resourceVersion: string,
): Result<ServedCertificate, CertificateRefusal> {
  const chain = parseChain(chainValue);
  if (chain === null) return err({ rule: "not-a-certificate" });
  const key = parseKey(keyValue);
  if (key === null) return err({ rule: "not-a-key" });
  const leaf = chain[0]!;
  if (!leaf.checkPrivateKey(key)) return err({ rule: "key-mismatch" });
  const notBefore = leaf.validFromDate.getTime();
  const notAfter = leaf.validToDate.getTime();
  if (now < notBefore) return err({ rule: "not-yet-valid" });
  if (now > notAfter) return err({ rule: "expired" });
  const names = dnsNames(leaf);
  const uncovered = hostnames.find((h) => !covers(names, h));
  if (uncovered !== undefined) return err({ rule: "hostname-not-covered", hostname: uncovered });
  const pem = chain.map((c) => c.toString()).join("");
  const pkcs8 = key.export({ type: "pkcs8", format: "pem" }).toString();
  if (pem.length + pkcs8.length > MAX_SERVED_BYTES) return err({ rule: "too-large" });
  return ok(
    Object.freeze({
      chain: pem,
      key: pkcs8,
      id: createHash("sha256").update(pem).digest("hex").slice(0, 16),
      serial: leaf.serialNumber.toUpperCase(),
      notBefore,
      notAfter,
      resourceVersion,
    }),
  );
}

function parseChain(value: string): X509Certificate[] | null {
  if (value.length > MAX_CHAIN_BYTES) return null;
  const blocks = value.match(PEM_CERTIFICATE);
  if (blocks === null) return null;
  try {
    return blocks.map((b) => new X509Certificate(b));
  } catch {
    return null;
  }
}

function parseKey(value: string): KeyObject | null {
  if (value.length > MAX_KEY_BYTES) return null;
  try {
    // No passphrase: an encrypted key throws here rather than prompting.
    return createPrivateKey({ key: Buffer.from(value, "latin1"), format: "pem" });
  } catch {
    return null;
  }
}

/**
 * The leaf's DNS names, lower-cased. Node quotes a name holding characters a hostname cannot
 * (`DNS:"a,b"`); such a name covers nothing, so it is left out.
 */
function dnsNames(leaf: X509Certificate): Set<string> {
  const names = new Set<string>();
  for (const entry of (leaf.subjectAltName ?? "").split(", ")) {
    if (entry.startsWith("DNS:") && !entry.startsWith('DNS:"'))
      names.add(entry.slice(4).toLowerCase());
  }
  return names;
}

function covers(names: ReadonlySet<string>, hostname: string): boolean {
  if (names.has(hostname)) return true;
  if (hostname.startsWith("*.")) return false;
  const dot = hostname.indexOf(".");
  return dot > 0 && names.has(`*${hostname.slice(dot)}`);
}
