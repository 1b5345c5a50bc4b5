// What the status API shows, built field by field from the Snapshot: nothing is passed through
// whole, so a field added to App later (or the Secret bytes it already has) cannot leak by default.

import { listedRefusals } from "../registry/echo.ts";
import { CERTIFICATE_RULES } from "../snapshot/certificate.ts";
import { UNUSABLE_RULES } from "../snapshot/credential.ts";
import type { LookupResult } from "../snapshot/lookup.ts";
import type { App, Conflict, NotReadyReason, RegistryStatus, Snapshot } from "../snapshot/types.ts";

/** An App as `/v1/apps` shows it: the Registry's declaration and this replica's readiness. */
export interface AppRecord {
  readonly name: string;
  readonly hostnames: readonly string[];
  readonly secretRef: { readonly namespace: string; readonly name: string; readonly key: string };
  readonly upstream: string | null;
  /** The App's `credential` and what becomes of it; null without one. Never the value. */
  readonly credential: CredentialRecord | null;
  readonly ready: boolean;
  readonly reason: NotReadyReason | null;
  readonly secretResourceVersion: string | null;
  /** The App's `tls` and its certificate; null without one. Never the key. */
  readonly tls: TlsRecord | null;
}

/**
 * What an App's certificate comes to (ADR 56): `served` (the TLS Secret's), `refused` (it breaks
 * `rule`; `served` is the last good one, if any), or `certificates-off`.
 */
export interface TlsRecord {
  readonly secretRef: { readonly namespace: string; readonly name: string };
  readonly state: "served" | "refused" | "certificates-off";
  /** What the refused certificate breaks; else null. */
  readonly rule: string | null;
  /** The certificate the proxies serve for the App's hostnames; null: none (the default one). */
  readonly served: ServedRecord | null;
  /** The TLS Secret's resourceVersion last read; null: absent or not read. */
  readonly secretResourceVersion: string | null;
}

/** A served certificate by its public facts. */
export interface ServedRecord {
  readonly id: string;
  readonly serial: string;
  /** ISO 8601. */
  readonly notBefore: string;
  readonly notAfter: string;
}

/**
 * What an App's credential comes to (ADR 53): `served` (its upstream gets it), `credentials-off`
 * (`--serve-credentials` is off), `secret-unusable` (the value breaks `rule`), or
 * `secret-unavailable` (no value).
 */
export interface CredentialRecord {
  readonly prefix: string;
  readonly state: "served" | "credentials-off" | "secret-unusable" | "secret-unavailable";
  /** Which rule the value breaks, when `secret-unusable`; else null. */
  readonly rule: string | null;
}

/** What `/v1/hosts/{host}` says about a host some App serves. */
interface HostRecord {
  /** The host after normalisation (port, case and one trailing dot dropped; IDN as punycode). */
  readonly host: string;
  readonly app: string;
  readonly upstream: string | null;
  readonly ready: boolean;
  readonly match: "exact" | "wildcard";
  /** The Registry hostname that matched: the host itself, or `*.suffix`. */
  readonly pattern: string;
  readonly revision: number;
}

/** `/v1/snapshot`: the served Snapshot in numbers, or the not-synced shape before the first. */
export interface SnapshotRecord {
  readonly revision: number;
  readonly synced: boolean;
  /** ISO 8601; null before the first Snapshot. */
  readonly builtAt: string | null;
  readonly apps: number;
  readonly readyApps: number;
  readonly hostnames: number;
  /**
   * Null before the first Snapshot: nothing is known about the Registry yet. At most the first
   * few refused App entries are listed; `moreRefusedApps` counts the rest.
   */
  readonly registry: (RegistryStatus & { readonly moreRefusedApps: number }) | null;
  readonly conflicts: readonly Conflict[];
  /** Where the Snapshot's inputs came from; null before the first Snapshot. */
  readonly source: "api-server" | "state-file" | null;
  /** ISO 8601: when the state file the Snapshot came from was written; null otherwise. */
  readonly stateSavedAt: string | null;
  /** Zero-hop: each proxy the sidecar keeps the table of, and the revision it answers from. */
  readonly proxies: readonly ProxyRecord[];
}

/** A proxy in zero-hop mode: its name, and the revision it answers from (null: none yet). */
export interface ProxyRecord {
  readonly target: string;
  readonly revision: number | null;
}

/** The App without its Secret bytes. */
export function appRecord(app: App): AppRecord {
  return {
    name: app.name,
    hostnames: app.hostnames,
    secretRef: {
      namespace: app.secretRef.namespace,
      name: app.secretRef.name,
      key: app.secretRef.key,
    },
    upstream: app.upstream,
    credential: credentialRecord(app),
    ready: app.ready,
    reason: app.reason,
    secretResourceVersion: app.secretResourceVersion,
    tls: tlsRecord(app),
  };
}

/** An App's certificate as the status API shows it: its public facts, never the key. */
function tlsRecord(app: App): TlsRecord | null {
  const { tls, certificate } = app;
  if (tls === null || certificate === null) return null;
  const { refusal, served } = certificate;
  const rule =
    refusal === null
      ? null
      : refusal.hostname === undefined
        ? CERTIFICATE_RULES[refusal.rule]
        : `${CERTIFICATE_RULES[refusal.rule]}: ${refusal.hostname}`;
  return {
    secretRef: { namespace: tls.secretRef.namespace, name: tls.secretRef.name },
    state: certificate.state === "off" ? "certificates-off" : certificate.state,
    rule,
    served:
      served === null
        ? null
        : {
            id: served.id,
            serial: served.serial,
            notBefore: new Date(served.notBefore).toISOString(),
            notAfter: new Date(served.notAfter).toISOString(),
          },
    secretResourceVersion: certificate.resourceVersion,
  };
}

/** An App's credential as the status API shows it: its prefix and state, never its value. */
function credentialRecord(app: App): CredentialRecord | null {
  const { credentialPrefix: prefix, state, reason } = app;
  if (prefix === null) return null;
  const rule =
    reason === "value-too-long" || reason === "value-not-a-header" ? UNUSABLE_RULES[reason] : null;
  return { prefix, state: state === "ready" ? "served" : state, rule };
}

/** A found lookup as the host API shows it. */
export function hostRecord(
  found: Extract<LookupResult, { kind: "found" }>,
  revision: number,
): HostRecord {
  return {
    host: found.host,
    app: found.app.name,
    upstream: found.app.upstream,
    ready: found.app.ready,
    match: found.match,
    pattern: found.pattern,
    revision,
  };
}

/** The Snapshot's summary; `synced` is always true for a published Snapshot. */
export function snapshotRecord(
  snapshot: Snapshot,
  proxies: readonly ProxyRecord[] = [],
): SnapshotRecord {
  const refused = listedRefusals(snapshot.registry.refusedApps);
  return {
    revision: snapshot.revision,
    synced: true,
    builtAt: new Date(snapshot.builtAt).toISOString(),
    apps: snapshot.apps.size,
    readyApps: snapshot.apps.readyCount,
    hostnames: snapshot.routes.hostnameCount,
    registry: {
      present: snapshot.registry.present,
      resourceVersion: snapshot.registry.resourceVersion,
      error: snapshot.registry.error,
      refusedApps: refused.listed.map((r) => ({
        index: r.index,
        name: r.name,
        reason: r.reason,
        kept: r.kept,
      })),
      moreRefusedApps: refused.more,
      contentHash: snapshot.registry.contentHash,
    },
    conflicts: snapshot.routes.conflicts,
    source: snapshot.source.kind,
    stateSavedAt:
      snapshot.source.kind === "state-file"
        ? new Date(snapshot.source.savedAt).toISOString()
        : null,
    proxies,
  };
}

/** `/v1/snapshot` before the first Snapshot: revision 0, nothing counted, nothing known. */
export const NOT_SYNCED_SNAPSHOT: SnapshotRecord = Object.freeze({
  revision: 0,
  synced: false,
  builtAt: null,
  apps: 0,
  readyApps: 0,
  hostnames: 0,
  registry: null,
  conflicts: Object.freeze([]),
  source: null,
  stateSavedAt: null,
  proxies: Object.freeze([]),
});
