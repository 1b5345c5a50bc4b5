import type { RefusedApp } from "../registry/parse.ts";
import type { AppSpec, AppTls, SecretKeyRef } from "../registry/schema.ts";
import type { CertificateRefusal, ServedCertificate } from "./certificate.ts";
import type { ReadonlySecretIndex } from "./secret-index.ts";

/**
 * Why an App is not ready (docs/serving.md, "The situations"): its Secret is absent, lacks the
 * key, or the value is empty (for an App with a `credential`, once one trailing line break is
 * taken off); or the App has a `credential` and the sidecar does not serve them
 * (`credentials-off`), or its value cannot be an `Authorization` header: over `MAX_CREDENTIAL`
 * bytes (`value-too-long`), or a byte other than visible ASCII, space and tab
 * (`value-not-a-header`).
 */
export type NotReadyReason =
  | "secret-absent"
  | "key-missing"
  | "value-empty"
  | "credentials-off"
  | "value-too-long"
  | "value-not-a-header";

/**
 * What `/v1/route` answers for an App: `ready` routes it; each other state is the 503's
 * `x-mirror-reason`. Derived from the `NotReadyReason`: the first three reasons are
 * `secret-unavailable`, the header rules `secret-unusable`.
 */
export type AppState = "ready" | "secret-unavailable" | "secret-unusable" | "credentials-off";

/** One App as this replica serves it: the Registry's declaration plus what this replica's watch sees. */
export interface App {
  readonly name: string;
  readonly hostnames: readonly string[];
  readonly secretRef: SecretKeyRef;
  readonly upstream: string | null;
  /** The Registry's `credential.prefix`; null when the App has no `credential` (ADR 53). */
  readonly credentialPrefix: string | null;
  /**
   * True only when the referenced Secret exists, has the key, and the value is non-empty, and,
   * for an App with a `credential`, credentials are served and the value is a header value.
   */
  readonly ready: boolean;
  readonly reason: NotReadyReason | null;
  /** `ready` and `reason` as `/v1/route` answers them. */
  readonly state: AppState;
  /**
   * The value a ready App's served credential reads (`credential` is made of it): its bytes,
   * one character per byte; else null, as no other value is kept (ADR 68). Immutable: no copy.
   */
  readonly secretValue: string | null;
  /**
   * A ready App with a `credential`: the `Authorization` value its upstream gets (the prefix,
   * then the value less one trailing line break); else null. Secret bytes.
   */
  readonly credential: string | null;
  readonly secretResourceVersion: string | null;
  /** The Registry's `tls`: where its certificate lives; null when it declares none. */
  readonly tls: AppTls | null;
  /** Null when the App declares no `tls`; its certificate otherwise (ADR 56). */
  readonly certificate: AppCertificate | null;
}

/**
 * An App's certificate: `served` is what a zero-hop proxy serves for its hostnames. State
 * `served`: the TLS Secret's certificate; `refused`: the Secret's certificate broke `refusal`,
 * and `served` is the App's last good one (null: none); `off`: `--serve-certificates` is false,
 * nothing is read.
 */
export interface AppCertificate {
  readonly state: "served" | "refused" | "off";
  readonly served: ServedCertificate | null;
  readonly refusal: CertificateRefusal | null;
  /** The TLS Secret's resourceVersion this was read from; null when it is absent or not read. */
  readonly resourceVersion: string | null;
}

/** Two or more Apps claiming one hostname or pattern: `winner` (first by name) serves it. */
export interface Conflict {
  readonly hostname: string;
  readonly winner: string;
  readonly losers: readonly string[];
}

/** An App entry of the Registry that was refused; the other Apps still apply. */
export interface RefusedAppStatus extends RefusedApp {
  /** True when the Snapshot still serves the App's last good version (from an earlier Registry). */
  readonly kept: boolean;
}

/** The Registry as the Snapshot was built from it. */
export interface RegistryStatus {
  /** False when the Registry Secret does not exist (a valid, empty Registry). */
  readonly present: boolean;
  readonly resourceVersion: string | null;
  /** Why the latest Registry value was refused whole; the last good document is still served. */
  readonly error: string | null;
  /** The latest value's App entries that were refused, each with why. */
  readonly refusedApps: readonly RefusedAppStatus[];
  /** A digest of the latest value's bytes (16 hex digits), the same on every replica; null when absent. */
  readonly contentHash: string | null;
}

/**
 * A non-empty value whose bytes this replica does not keep: no served credential or certificate
 * reads it (ADR 68). Not a byte string (one character above U+00FF), so no value can be taken for it.
 */
export const UNKEPT_VALUE = "\u{fffd}unkept";

/**
 * The keys of one Secret that Apps read (ADR 68): `bytes`, whose values this replica keeps (a
 * served credential's, a served certificate's), and `presence`, of whose values it keeps only
 * whether they are empty (an App's readiness). Disjoint: a key read both ways is in `bytes`.
 */
export interface ReadKeys {
  readonly bytes: ReadonlySet<string>;
  readonly presence: ReadonlySet<string>;
}

/**
 * A Secret as the builder reads it: each value's bytes, one character per byte, or UNKEPT_VALUE
 * for a non-empty value read only for its presence.
 */
export interface SecretData {
  readonly data: Readonly<Record<string, string>>;
  readonly resourceVersion: string;
  /**
   * The keys whose state `data` holds, as the store read them when the Secret arrived; a key
   * outside them was not read. Absent: every key was.
   */
  readonly keptFor?: ReadKeys;
}

/** The Secrets the builder may read, by namespace and name; an absent entry means an absent Secret. */
export type SecretLookup = ReadonlySecretIndex<SecretData>;

/**
 * Where a Snapshot's inputs came from: this replica's watches of the API server, or, after a
 * warm start and until every watch is confirmed current, the state file (written at `savedAt`).
 */
export type SnapshotSource =
  | { readonly kind: "api-server" }
  | { readonly kind: "state-file"; readonly savedAt: number };

/** The inputs came from the API server's watches. */
export const FROM_API_SERVER: SnapshotSource = Object.freeze({ kind: "api-server" });

/** What the builder does not derive from its inputs. */
export interface BuildMeta {
  readonly revision: number;
  /** Milliseconds since the epoch. */
  readonly builtAt: number;
  readonly registry: RegistryStatus;
  /** Default: from the API server. */
  readonly source?: SnapshotSource;
  /**
   * `--serve-credentials`; default false: an App with a `credential` is `credentials-off`. The
   * operator's, fixed for a process: `rebuildForSecrets` keeps the Apps it does not re-resolve,
   * so every Snapshot it follows on from must have been built under the same value.
   */
  readonly serveCredentials?: boolean;
  /**
   * `--serve-certificates`; default false: an App's `tls` is `off` and its Secret is not read.
   * The operator's, fixed for a process, as `serveCredentials`.
   */
  readonly serveCertificates?: boolean;
  /**
   * For a build with no Snapshot before it (a warm start's first): each App's last good
   * certificate the state file kept beside a refused one, by App name (ADR 92).
   */
  readonly keptCertificates?: ReadonlyMap<string, KeptCertificate>;
}

/**
 * An App's last good certificate while its TLS Secret's is refused, with what it was checked
 * against: what a state file keeps, so a restarted replica serves it on (ADR 92).
 */
export interface KeptCertificate {
  readonly app: string;
  readonly hostnames: readonly string[];
  readonly secretRef: { readonly namespace: string; readonly name: string };
  readonly served: ServedCertificate;
}

/** What an App's certificate is resolved from besides its Secret: the same App before. */
export type CertificateBefore = Pick<App, "hostnames" | "tls" | "certificate">;

/**
 * The hostname side of a Snapshot, derived from the Registry alone, so a change of App Secret
 * bytes reuses it whole.
 */
export interface RouteTable {
  /** The Registry's Apps in slot order. */
  readonly specs: readonly AppSpec[];
  /** App names in sorted order; an App's index in this list is its slot in the AppTable. */
  readonly names: readonly string[];
  /** Exact hostname → slot of the App that serves it. */
  readonly exact: ReadonlyMap<string, number>;
  /** Wildcard suffix (`shop.example.com` for `*.shop.example.com`) → slot. */
  readonly wildcard: ReadonlyMap<string, number>;
  /**
   * A Secret → the slot of the App that references it, or the slots when several do. Built when
   * first read: the first Snapshot of a Registry never reads it, a change of its Secrets does.
   */
  readonly slotsBySecret: ReadonlySecretIndex<number | readonly number[]>;
  readonly conflicts: readonly Conflict[];
  readonly hostnameCount: number;
}

/** Apps by slot, in fixed-size chunks, so replacing one App copies one chunk and the directory. */
export interface AppTable {
  readonly chunks: readonly (readonly App[])[];
  readonly size: number;
  readonly readyCount: number;
}

/** What a `/v1/route` answer reads of an App. */
export type RouteApp = Pick<App, "name" | "upstream" | "state" | "credential">;

/**
 * What answering `/v1/route` reads of a Snapshot, and all the data thread holds of one:
 * the hostname indexes and, per slot, the App's name, upstream, state and credential (the one
 * Secret byte string a routed answer carries, ADR 53). No status fields. Every Snapshot is one.
 */
export interface RouteView {
  readonly revision: number;
  readonly routes: Pick<RouteTable, "exact" | "wildcard">;
  readonly apps: { readonly chunks: readonly (readonly RouteApp[])[] };
}

/** What a zero-hop push reads of an App: what a route answer reads, and its certificate. */
export type PushApp = RouteApp & Pick<App, "certificate">;

/** What a zero-hop push reads of a Snapshot: its routes and each App's certificate. Every Snapshot is one. */
export interface PushView extends RouteView {
  readonly apps: { readonly chunks: readonly (readonly PushApp[])[] };
}

/** The immutable state one request is answered from. Published whole, replaced whole. */
export interface Snapshot {
  readonly revision: number;
  readonly builtAt: number;
  readonly registry: RegistryStatus;
  readonly source: SnapshotSource;
  readonly routes: RouteTable;
  readonly apps: AppTable;
}
