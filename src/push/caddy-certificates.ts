// The served certificates (ADR 56) as Caddy 2.6 holds them: the `tls` app's
// `certificates.load_pem` and the zero-hop server's `tls_connection_policies`.
//
// Caddy picks a certificate for a handshake in two steps: the first connection policy whose `sni`
// matcher takes the name (exact, or one label under `*.suffix`) applies, and its
// `certificate_selection` keeps, of the certificates whose SANs cover the name, those with one of
// its tags; when none does, it keeps the tagged ones among all loaded certificates (tried on
// 2.6.2). So each App has a policy for the names it holds, selecting the tag of its App only: a
// certificate whose SANs also cover another App's name is never served for it, and a name no App
// holds (or no SNI) reaches the last policy, which selects the default certificate the file loads
// (`load_files`, tagged `replica-mirror-default`). Caddy 2.6 has no `fallback_sni` (its decoder
// refuses it) and needs none. The exact names' policies come before the wildcards' (an exact
// name under another App's wildcard is its own App's), and a `*.suffix` matcher takes one label
// only: a name deeper under a wildcard gets the default certificate (no certificate's wildcard
// covers it either). Caddy tries the policies one by one, each name of each.
//
// A certificate's entry is tagged with its Apps' names, not its id, so a rotation changes one
// entry of `load_pem` and no policy; two Apps serving one certificate share one entry (Caddy's
// cache keeps a certificate once).

import { err, type Result } from "../result.ts";
import type { AdminAnswer } from "./admin-http.ts";
import type { Json } from "./caddy-answers.ts";
import type { CertificateEntry } from "./certificates.ts";
import { canonicalJson, sha256 } from "./table-digest.ts";
import type { PushFailure } from "./target.ts";

/** The admin API path of the loaded certificates (PATCH of the array, or of one entry). */
export const LOAD_PEM_PATH = "/config/apps/tls/certificates/load_pem";
/** The admin API path of the zero-hop server's connection policies (the file's server `@id`). */
export const POLICIES_PATH = "/id/replica_mirror_server/tls_connection_policies";
/** The tag of the default certificate, which the configuration file loads from files. */
export const DEFAULT_TAG = "replica-mirror-default";
/** The last policy: a name no App holds, and no SNI, gets the default certificate. */
export const DEFAULT_POLICY: Json = Object.freeze({
  certificate_selection: Object.freeze({ any_tag: Object.freeze([DEFAULT_TAG]) }),
});

/** The tag of the certificate `app` is served. */
export const appTag = (app: string): string => `replica-mirror-app:${app}`;

/** One entry of `load_pem`, without its key: what decides whether the entry changed. */
export interface LoadedCertificate {
  readonly id: string;
  /** Its Apps' tags, in App order. */
  readonly tags: readonly string[];
}

/** The served certificates as Caddy should hold them; the keys stay in `entries`. */
export interface CaddyCertificates {
  readonly policies: readonly Json[];
  /** `load_pem` without the keys, in the order of the array. */
  readonly loaded: readonly LoadedCertificate[];
  /** The JSON of `policies`: equal texts, equal policies. */
  readonly policiesText: string;
  /** For each entry of `loaded`, the certificate whose chain and key it carries. */
  readonly sources: readonly CertificateEntry[];
}

/** No served certificate: what the configuration file holds. */
export const NO_CERTIFICATES: CaddyCertificates = caddyCertificates([]);

/** What Caddy holds while it serves `entries` (certificateEntries' list, in its order). */
export function caddyCertificates(entries: readonly CertificateEntry[]): CaddyCertificates {
  const exact: Json[] = [];
  const wildcard: Json[] = [];
  const byId = new Map<string, { tags: string[]; source: CertificateEntry }>();
  for (const entry of entries) {
    const tag = appTag(entry.app);
    const policy = (sni: string[]) => ({
      match: { sni },
      certificate_selection: { any_tag: [tag] },
    });
    const [wild, plain] = partition(entry.names, (n) => n.startsWith("*."));
    if (plain.length > 0) exact.push(policy(plain));
    if (wild.length > 0) wildcard.push(policy(wild));
    const loaded = byId.get(entry.certificate.id);
    if (loaded === undefined) byId.set(entry.certificate.id, { tags: [tag], source: entry });
    else loaded.tags.push(tag);
  }
  const policies = [...exact, ...wildcard, DEFAULT_POLICY];
  const loaded = [...byId].map(([id, { tags }]) => ({ id, tags }));
  return {
    policies,
    loaded,
    policiesText: JSON.stringify(policies),
    sources: [...byId.values()].map(({ source }) => source),
  };
}

/** The `load_pem` entry at `index` of `certificates`: its chain and its key (Secret bytes). */
export function loadPemEntry(certificates: CaddyCertificates, index: number): Json {
  const { certificate } = certificates.sources[index]!;
  return {
    certificate: certificate.chain,
    key: certificate.key,
    tags: [...certificates.loaded[index]!.tags],
  };
}

/** One admin API request of a certificate push; `body` may hold keys: never log it. */
export interface CertificateRequest {
  readonly path: string;
  readonly body: () => string;
}

/**
 * The requests that take Caddy from holding `held` (null: anything) to holding `next`, in order:
 * none when equal; one entry of `load_pem` when only it changed (a rotation); else the whole
 * `load_pem`, then the policies if they changed (a new App's certificate is loaded before a
 * policy selects it). Caddy reloads its whole configuration for each request.
 */
export function certificateRequests(
  held: CaddyCertificates | null,
  next: CaddyCertificates,
): readonly CertificateRequest[] {
  if (held === null) {
    return [
      { path: LOAD_PEM_PATH, body: () => wholeLoadPem(next) },
      { path: POLICIES_PATH, body: () => next.policiesText },
    ];
  }
  const requests: CertificateRequest[] = [];
  const changed =
    held.loaded.length === next.loaded.length ? changedEntries(held.loaded, next.loaded) : null;
  if (changed?.length === 1) {
    const index = changed[0]!;
    requests.push({
      path: `${LOAD_PEM_PATH}/${index}`,
      body: () => JSON.stringify(loadPemEntry(next, index)),
    });
  } else if (changed === null || changed.length > 1) {
    requests.push({ path: LOAD_PEM_PATH, body: () => wholeLoadPem(next) });
  }
  if (held.policiesText !== next.policiesText) {
    requests.push({ path: POLICIES_PATH, body: () => next.policiesText });
  }
  return requests;
}

/** `names` split into those `test` holds for and the others. */
function partition(
  names: readonly string[],
  test: (name: string) => boolean,
): [string[], string[]] {
  const yes: string[] = [];
  const no: string[] = [];
  for (const name of names) (test(name) ? yes : no).push(name);
  return [yes, no];
}

const wholeLoadPem = (certificates: CaddyCertificates): string =>
  JSON.stringify(certificates.loaded.map((_, i) => loadPemEntry(certificates, i)));

/** The indexes whose entries differ; both lists have the same length. */
function changedEntries(
  held: readonly LoadedCertificate[],
  next: readonly LoadedCertificate[],
): number[] {
  const changed: number[] = [];
  next.forEach((entry, i) => {
    const before = held[i]!;
    if (before.id !== entry.id || before.tags.join("\n") !== entry.tags.join("\n")) changed.push(i);
  });
  return changed;
}

/**
 * The digest of the served certificates, for the verification: the policies and each entry's
 * chain and tags (not its key), key order aside. `loadPem` is the entries' chains and tags as
 * Caddy lists them; null when it has none (the configuration file's `[]` or no such key).
 */
export function certificatesDigest(policies: unknown, loadPem: unknown): string {
  const certificates = Array.isArray(loadPem)
    ? loadPem.map((entry: Json | null) => ({
        certificate: entry?.certificate ?? null,
        tags: entry?.tags ?? null,
      }))
    : [];
  return sha256(canonicalJson({ policies, certificates }));
}

/** The digest `certificatesDigest` gives while Caddy holds `certificates`. */
export function digestOfCertificates(certificates: CaddyCertificates): string {
  return certificatesDigest(
    certificates.policies,
    certificates.sources.map((source, i) => ({
      certificate: source.certificate.chain,
      tags: certificates.loaded[i]!.tags,
    })),
  );
}

/** Whether `policies` and `loadPem`, as Caddy lists them, are the file's: no served certificate. */
export function holdsNoCertificates(policies: unknown, loadPem: unknown): boolean {
  const noneLoaded = loadPem === null || (Array.isArray(loadPem) && loadPem.length === 0);
  return noneLoaded && canonicalJson(policies) === canonicalJson(NO_CERTIFICATES.policies);
}

const PEM_BLOCK = /-----BEGIN [^-]*-----[\s\S]*?(-----END [^-]*-----|$)/g;
const BASE64_RUN = /[A-Za-z0-9+/=]{40,}/g;

/**
 * Caddy's refusal of a certificate request, its answer with any PEM block or long base64 run
 * cut out: Caddy may quote what it failed to decode, and a key must never reach a message.
 */
export function certificateRefused(what: string, answer: AdminAnswer): Result<never, PushFailure> {
  const text = answer.text.replace(PEM_BLOCK, "[pem]").replace(BASE64_RUN, "[base64]");
  return err({ reason: "rejected", message: `${what}: ${answer.status} ${text.slice(0, 300)}` });
}
