import * as z from "zod";
import { normaliseHostname } from "./hostname.ts";
import { type LocalAddress, localUpstream } from "./local-upstream.ts";

/** One Secret, by namespace and name: the one way the mirror and the builder name a Secret. */
export interface SecretRef {
  readonly namespace: string;
  readonly name: string;
}

/** Where an App's Secret bytes live: one key of one Secret (the document's `secretRef`). */
export interface SecretKeyRef extends SecretRef {
  readonly key: string;
}

/** One App as the Registry declares it, hostnames normalised. */
export interface AppSpec {
  readonly name: string;
  readonly hostnames: readonly string[];
  readonly secretRef: SecretKeyRef;
  readonly upstream: string | null;
  /**
   * Null: the App's upstream gets the client's `Authorization` unchanged. Else, with
   * `--serve-credentials true`, it gets `Authorization: <prefix><the Secret's value>` (ADR 53).
   */
  readonly credential: AppCredential | null;
  /**
   * Null: no certificate of its own. Else, with `--serve-certificates true`, a zero-hop proxy
   * serves the App's hostnames with the certificate of this `kubernetes.io/tls` Secret (ADR 56).
   */
  readonly tls: AppTls | null;
}

/** Where an App's TLS certificate lives: the `tls.crt` and `tls.key` of one Secret. */
export interface AppTls {
  readonly secretRef: SecretRef;
}

/** How an App's Secret value becomes its upstream's `Authorization` header. */
export interface AppCredential {
  /** Written before the value (`"Bearer "`); visible ASCII and spaces, at most `MAX_PREFIX`. */
  readonly prefix: string;
}

/** A valid Registry document, version 1. */
export interface Registry {
  readonly apps: readonly AppSpec[];
}

export const REGISTRY_API_VERSION = "replica-mirror/v1";

/** A naming rule: null when a value follows it, else why not (a message that fits after a path). */
export type NameRule = (value: string) => string | null;

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KEY = /^[-._a-zA-Z0-9]+$/;

// Kubernetes' own rules, the one definition of each (the CLI's flags use them too).

/** A DNS-1123 label: App names, namespaces. */
export const dnsLabel: NameRule = (v) =>
  v.length > 63
    ? "must be at most 63 characters"
    : LABEL.test(v)
      ? null
      : "must be a DNS-1123 label (lower-case letters, digits, '-')";

/** A DNS-1123 subdomain: Secret names. */
export const dnsSubdomain: NameRule = (v) =>
  v.length > 253
    ? "must be at most 253 characters"
    : SUBDOMAIN.test(v)
      ? null
      : "must be a DNS-1123 subdomain";

/** A key of a Secret's data. */
export const secretKey: NameRule = (v) =>
  v.length > 253
    ? "must be at most 253 characters"
    : !KEY.test(v)
      ? "must consist of alphanumerics, '-', '_' or '.'"
      : v === "." || v === ".."
        ? "must not be '.' or '..'"
        : null;

/** A zod string held to a naming rule, for flags and other single values. */
export const named = (rule: NameRule) =>
  z.string().check((ctx) => {
    const why = rule(ctx.value);
    if (why !== null) ctx.issues.push({ code: "custom", message: why, input: ctx.value });
  });

/** Hostnames and patterns one App may declare. */
export const MAX_HOSTNAMES = 100;
/** Characters of an `upstream`. */
export const MAX_UPSTREAM = 2_048;
/** Characters of a `credential.prefix`. */
export const MAX_PREFIX = 64;

// The document's shape, with no checks or transforms inside: zod compiles such a schema into one
// fast function. An App's naming rules are one check of the whole App once its shape holds
// (`checkNames`): per-field checks cost zod's machinery once per string, about three times the
// cost of the rest at 10k Apps. Paths are built only for an issue.
export const appShape = z.object({
  name: z.string(),
  hostnames: z.array(z.string()),
  secretRef: z.object({ namespace: z.string().optional(), name: z.string(), key: z.string() }),
  upstream: z.string().optional(),
  credential: z.object({ prefix: z.string().optional() }).optional(),
  tls: z
    .object({ secretRef: z.object({ namespace: z.string().optional(), name: z.string() }) })
    .optional(),
  // The leader's view of readiness: accepted and ignored (docs/serving.md, "Readiness is this
  // replica's own").
  secretReady: z.boolean().optional(),
});

/** A broken naming rule: why, the value, and where it is inside the App. */
export interface NameIssue {
  readonly message: string;
  readonly input: unknown;
  readonly path: readonly (string | number)[];
}

/** Where `checkNames` puts what it found wrong. */
export type Issues = NameIssue[];

/** The rules of an App that the operator may relax (README, "Configuration"). */
export interface AppRules {
  /** Whether an `upstream` may name a loopback, unspecified or link-local host (ADR 48). */
  readonly allowLocalUpstreams: boolean;
}

const LOCAL_UPSTREAM: Readonly<Record<LocalAddress, string>> = {
  loopback: "a loopback address is not allowed (--allow-local-upstreams)",
  unspecified: "an unspecified address (0.0.0.0/8, ::) is not allowed (--allow-local-upstreams)",
  "link-local":
    "a link-local address (169.254.0.0/16, fe80::/10) is not allowed (--allow-local-upstreams)",
};

/**
 * Every naming rule of one App: an issue per broken rule, its path inside the App. Each valid
 * hostname's normal form goes into `normal`, when given, in order.
 */
export function checkNames(
  app: AppDocument,
  rules: AppRules,
  issues: Issues,
  normal?: string[],
): void {
  const { name, hostnames, secretRef: ref } = app;
  // Plain statements, no closures: this runs once per App of every Registry value.
  let why = dnsLabel(name);
  if (why !== null) issues.push(issue(why, name, ["name"]));
  if (hostnames.length === 0)
    issues.push(issue("at least one hostname is required", hostnames, ["hostnames"]));
  if (hostnames.length > MAX_HOSTNAMES)
    issues.push(issue(`at most ${MAX_HOSTNAMES} hostnames`, hostnames, ["hostnames"]));
  // Handed to the data plane as a header value: nginx's default buffer for a header line is 8 KiB.
  const { upstream } = app;
  if (upstream !== undefined && upstream.length > MAX_UPSTREAM)
    issues.push(issue(`at most ${MAX_UPSTREAM} characters`, upstream, ["upstream"]));
  else if (upstream !== undefined && !rules.allowLocalUpstreams) {
    const local = localUpstream(upstream);
    if (local !== null) issues.push(issue(LOCAL_UPSTREAM[local], upstream, ["upstream"]));
  }
  for (let h = 0; h < hostnames.length; h++) {
    const hostname = normaliseHostname(hostnames[h]!);
    if (!hostname.ok) issues.push(issue(hostname.error, hostnames[h], ["hostnames", h]));
    else normal?.push(hostname.value);
  }
  if (ref.namespace !== undefined) {
    why = dnsLabel(ref.namespace);
    if (why !== null) issues.push(issue(why, ref.namespace, ["secretRef", "namespace"]));
  }
  why = dnsSubdomain(ref.name);
  if (why !== null) issues.push(issue(why, ref.name, ["secretRef", "name"]));
  why = secretKey(ref.key);
  if (why !== null) issues.push(issue(why, ref.key, ["secretRef", "key"]));
  const tls = app.tls?.secretRef;
  if (tls?.namespace !== undefined) {
    why = dnsLabel(tls.namespace);
    if (why !== null) issues.push(issue(why, tls.namespace, ["tls", "secretRef", "namespace"]));
  }
  if (tls !== undefined) {
    why = dnsSubdomain(tls.name);
    if (why !== null) issues.push(issue(why, tls.name, ["tls", "secretRef", "name"]));
  }
  const prefix = app.credential?.prefix;
  if (prefix !== undefined) {
    why = credentialPrefix(prefix);
    if (why !== null) issues.push(issue(why, prefix, ["credential", "prefix"]));
  }
}

// Space and visible ASCII: the prefix starts a header value, and a byte outside these would
// either be refused by the data plane or end the header (CR, LF).
const PREFIX = /^[\x20-\x7e]*$/;

/** A `credential.prefix`: what may come before the Secret's value in `Authorization`. */
export const credentialPrefix: NameRule = (v) =>
  v.length > MAX_PREFIX
    ? `at most ${MAX_PREFIX} characters`
    : PREFIX.test(v)
      ? null
      : "must be visible ASCII (0x21-0x7e) or spaces";

const issue = (message: string, input: unknown, path: (string | number)[]): NameIssue => ({
  message,
  input,
  path,
});

/** A document as the schema accepts it: hostnames as written, not yet normalised. */
export type AppDocument = z.infer<typeof appShape>;

/**
 * Apps one Registry may hold: past this, the document is refused whole. memory grows with the Apps
 * (BENCHMARKS.md, "memory", at 100k Apps), and a Registry of more is a mistake.
 */
export const MAX_APPS = 250_000;

const apiVersion = z.literal(REGISTRY_API_VERSION, { error: `must be "${REGISTRY_API_VERSION}"` });

/**
 * The document around its Apps (unknown fields are dropped: forward compatibility). A document
 * this refuses is refused whole; its App entries are checked one by one (`appShape`, then `checkNames`).
 */
export const registryEnvelope = z.object({
  apiVersion,
  apps: z.array(z.unknown()).max(MAX_APPS, `at most ${MAX_APPS} Apps`),
});

/**
 * The whole document's shape in one pass, the common case: when every entry has its shape, the
 * naming rules run on each (`checkNames`) outside zod's machinery, which costs a third of the
 * parse when paid once per App (ADR 31).
 */
export const registryShape = z.object({
  apiVersion,
  apps: z.array(appShape).max(MAX_APPS, `at most ${MAX_APPS} Apps`),
});
