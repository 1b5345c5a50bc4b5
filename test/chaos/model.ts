/**
 * The reference model: the README's Registry document (hostnames, matching precedence, conflicts)
 * and routing contract (what is served) written again, simply, from the contract. Its rules use
 * nothing from src/registry or src/snapshot: a shared bug there must show up as a disagreement,
 * not cancel out. It takes only the test world's Registry namespace and, as a type, the shape of
 * an App record (src/ops/records.ts).
 */
import type { AppRecord } from "../../src/ops/records.ts";
import { REGISTRY_NS } from "../support/world.ts";

/** One App as the generator writes it into the Registry document. */
export interface AppDef {
  readonly name: string;
  /** As written: case, a trailing dot and IDN spellings vary; the model normalises them. */
  readonly hostnames: readonly string[];
  /** namespace null: omitted from the document, so the Registry's namespace applies. */
  readonly secret: {
    readonly namespace: string | null;
    readonly name: string;
    readonly key: string;
  };
  readonly upstream: string | null;
  /** The App's `credential` (ADR 53): its upstream gets prefix + the key's value; null: none. */
  readonly credential: { readonly prefix: string } | null;
  /** Adds unknown fields and a `secretReady` the mirror must ignore. */
  readonly extras: boolean;
}

/**
 * What the Registry Secret holds. `bad`: refused whole (malformed, key missing), as the generator
 * made it. `partial`: a document with one invalid App entry, which alone is refused: `apps` are
 * the valid entries, and `refused` the name whose version in service before stays (when no valid
 * entry has it).
 */
export type RegistryValue =
  | { readonly kind: "absent" }
  | { readonly kind: "good"; readonly apps: readonly AppDef[] }
  | { readonly kind: "bad"; readonly variant: string }
  | {
      readonly kind: "partial";
      readonly variant: string;
      readonly apps: readonly AppDef[];
      readonly refused: string;
    };

/** An App Secret as the cluster holds it (UTF-8 values) with the resourceVersion of its last write. */
export interface SecretState {
  readonly data: Readonly<Record<string, string>>;
  readonly rv: string;
}

/** An App as the spec says it is served: hostnames normalised, namespace defaulted. */
export interface ServedApp {
  readonly name: string;
  readonly patterns: readonly string[];
  readonly namespace: string;
  readonly secretName: string;
  readonly key: string;
  readonly upstream: string | null;
  /** The credential's prefix; null: the App has no credential. */
  readonly credential: string | null;
}

/** What one sidecar's flags change in what it serves. */
export interface SidecarView {
  /** Whether its Secret watches cover a namespace (`--secret-namespaces`). */
  visible(namespace: string): boolean;
  /** `--serve-credentials true`. */
  readonly serveCredentials: boolean;
}

/** The cluster at one moment, with the Registry the spec says to serve then (the last good one). */
export interface ClusterState {
  readonly registry: RegistryValue;
  readonly registryRv: string | null;
  readonly secrets: ReadonlyMap<string, SecretState>;
  /** The last good document at this moment: absent counts as a good, empty one (README). */
  readonly served: readonly ServedApp[];
  /** Index of the latest state whose Registry was absent or good (this one if it is). */
  readonly lastGoodIndex: number;
}

/** How the model keys a Secret: `namespace/name`. */
export const secretId = (namespace: string, name: string): string => `${namespace}/${name}`;

// The IDN names the generator uses, with their punycode (checked by hand, not computed).
const IDN: Readonly<Record<string, string>> = {
  "bücher.example": "xn--bcher-kva.example",
  "*.bücher.example": "*.xn--bcher-kva.example",
};

/** A Registry hostname as the spec normalises it: one trailing dot dropped, lower case, punycode. */
export function normaliseDeclared(raw: string): string {
  const noDot = raw.endsWith(".") ? raw.slice(0, -1) : raw;
  const lower = noDot.toLowerCase();
  return IDN[lower] ?? lower;
}

/** The Apps a good document declares, as served. */
export function servedApps(apps: readonly AppDef[]): ServedApp[] {
  return apps.map((a) => ({
    name: a.name,
    patterns: [...new Set(a.hostnames.map(normaliseDeclared))],
    namespace: a.secret.namespace ?? REGISTRY_NS,
    secretName: a.secret.name,
    key: a.secret.key,
    upstream: a.upstream,
    credential: a.credential?.prefix ?? null,
  }));
}

/** A value with a refused App entry: its valid Apps, and the refused App as `before` served it. */
export function servedPartial(
  value: Extract<RegistryValue, { kind: "partial" }>,
  before: readonly ServedApp[],
): ServedApp[] {
  const valid = servedApps(value.apps);
  if (valid.some((a) => a.name === value.refused)) return valid;
  return [...valid, ...before.filter((a) => a.name === value.refused)];
}

/** The App that serves a pattern: among its claimants, the one whose name sorts first. */
function claimant(apps: readonly ServedApp[], pattern: string): ServedApp | undefined {
  let best: ServedApp | undefined;
  for (const a of apps) {
    if (a.patterns.includes(pattern) && (best === undefined || a.name < best.name)) best = a;
  }
  return best;
}

/** Exact beats wildcard; the longest wildcard suffix wins; `*.s` never matches `s` itself. */
export function matchHost(apps: readonly ServedApp[], host: string): ServedApp | undefined {
  const exact = claimant(apps, host);
  if (exact !== undefined) return exact;
  const labels = host.split(".");
  for (let i = 1; i < labels.length; i++) {
    const found = claimant(apps, `*.${labels.slice(i).join(".")}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

export type NotReady =
  | "secret-absent"
  | "key-missing"
  | "value-empty"
  | "credentials-off"
  | "value-not-a-header";

/**
 * A credential's header value (docs/serving.md, "Credentials"): the value less one trailing `\n`
 * or `\r\n`; nothing left is value-empty; a byte but visible ASCII, space and tab is
 * value-not-a-header. (The generator writes no value over 8 KiB.)
 */
function headerValue(value: string): { readonly value: string } | { readonly unusable: NotReady } {
  const trimmed = value.endsWith("\r\n")
    ? value.slice(0, -2)
    : value.endsWith("\n")
      ? value.slice(0, -1)
      : value;
  if (trimmed === "") return { unusable: "value-empty" };
  return /^[\t\x20-\x7e]*$/.test(trimmed) ? { value: trimmed } : { unusable: "value-not-a-header" };
}

/** Ready (null) or why not, for a Secret this replica can see (`visible` false: as if absent). */
function readiness(secret: SecretState | undefined, key: string): NotReady | null {
  if (secret === undefined) return "secret-absent";
  const value = secret.data[key];
  if (value === undefined) return "key-missing";
  return value === "" ? "value-empty" : null;
}

/**
 * An App as one sidecar serves it at one state: ready (reason null) or why not, the credential
 * its upstream gets, and the resourceVersion of its Secret as that sidecar sees it.
 */
export interface AppState {
  readonly reason: NotReady | null;
  readonly credential: string | null;
  readonly rv: string | null;
}

export function appState(state: ClusterState, app: ServedApp, view: SidecarView): AppState {
  const secret = visibleSecret(state, app, (ns) => view.visible(ns));
  const rv = secret?.rv ?? null;
  if (app.credential !== null && !view.serveCredentials)
    return { reason: "credentials-off", credential: null, rv };
  const reason = readiness(secret, app.key);
  if (reason !== null || app.credential === null) return { reason, credential: null, rv };
  const header = headerValue(secret!.data[app.key]!);
  if ("unusable" in header) return { reason: header.unusable, credential: null, rv };
  return { reason: null, credential: app.credential + header.value, rv };
}

/** The `x-mirror-reason` of an App not ready for `reason` (the sidecar's own may come here). */
export function refusal(
  reason: string,
): "secret-unavailable" | "secret-unusable" | "credentials-off" {
  if (reason === "credentials-off") return reason;
  return reason === "value-not-a-header" ? "secret-unusable" : "secret-unavailable";
}

/** A Secret as one sidecar can see it: outside its namespaces it is absent. */
export function visibleSecret(
  state: ClusterState,
  app: ServedApp,
  visible: (namespace: string) => boolean,
): SecretState | undefined {
  return visible(app.namespace)
    ? state.secrets.get(secretId(app.namespace, app.secretName))
    : undefined;
}

/** `/v1/apps` entries as the contract says they are, sorted by name. */
export function appRecords(
  apps: readonly ServedApp[],
  state: ClusterState,
  view: SidecarView,
): AppRecord[] {
  return [...apps]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((a) => {
      const { reason, rv } = appState(state, a, view);
      return {
        name: a.name,
        hostnames: a.patterns,
        secretRef: { namespace: a.namespace, name: a.secretName, key: a.key },
        upstream: a.upstream,
        credential: a.credential === null ? null : credentialRecord(a.credential, reason),
        ready: reason === null,
        reason,
        secretResourceVersion: rv,
        tls: null,
      };
    });
}

/** A credential as `/v1/apps` shows it: its prefix and what became of it, never the value. */
function credentialRecord(prefix: string, reason: NotReady | null): AppRecord["credential"] {
  if (reason === null) return { prefix, state: "served", rule: null };
  if (reason !== "value-not-a-header") return { prefix, state: refusal(reason), rule: null };
  const rule =
    "the value holds a byte other than visible ASCII, space and tab (a CR, LF or NUL, say)";
  return { prefix, state: "secret-unusable", rule };
}

export interface Conflict {
  readonly hostname: string;
  readonly winner: string;
  readonly losers: readonly string[];
}

/** Every pattern claimed by two Apps or more, sorted by pattern; the first name wins. */
function conflicts(apps: readonly ServedApp[]): Conflict[] {
  const claims = new Map<string, string[]>();
  for (const a of apps)
    for (const p of a.patterns) claims.set(p, [...(claims.get(p) ?? []), a.name]);
  return [...claims.entries()]
    .filter(([, names]) => names.length > 1)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([hostname, names]) => {
      const [winner, ...losers] = [...names].sort();
      return { hostname, winner: winner!, losers };
    });
}

/** The parts of `/v1/snapshot` the spec fixes for a converged replica. */
export interface SnapshotSummary {
  readonly apps: number;
  readonly readyApps: number;
  readonly hostnames: number;
  readonly registry: {
    readonly present: boolean;
    readonly resourceVersion: string | null;
    readonly rejected: boolean;
  };
  readonly conflicts: readonly Conflict[];
}

export function snapshotSummary(
  apps: readonly ServedApp[],
  state: ClusterState,
  view: SidecarView,
): SnapshotSummary {
  const records = appRecords(apps, state, view);
  return {
    apps: apps.length,
    readyApps: records.filter((r) => r.ready).length,
    hostnames: new Set(apps.flatMap((a) => a.patterns)).size,
    registry: {
      present: state.registry.kind !== "absent",
      resourceVersion: state.registryRv,
      rejected: state.registry.kind === "bad",
    },
    conflicts: conflicts(apps),
  };
}
