/** A listener address; port 0 picks a free port. */
export interface Address {
  readonly host: string;
  readonly port: number;
}

/**
 * Everything one sidecar needs, as `serve` parses it from flags and environment variables
 * (README, "Configuration").
 */
export interface SidecarConfig {
  readonly kubeconfig: string | undefined;
  readonly registryNamespace: string;
  readonly registryName: string;
  readonly registryKey: string;
  /** Empty: one cluster-wide watch. */
  readonly secretNamespaces: readonly string[];
  readonly secretSelector: string | undefined;
  readonly listen: Address;
  readonly opsListen: Address;
  /** Whether the status API on `opsListen` answers peers off loopback; probes and metrics do anyway. */
  readonly allowRemoteStatusApi: boolean;
  readonly watchTimeoutSeconds: number;
  readonly logLevel: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  /** Undefined: no state file. */
  readonly stateFile: string | undefined;
  /** Undefined: no state file (a file needs a key). */
  readonly stateKeyFile: string | undefined;
  readonly stateMaxAgeSeconds: number;
  /** Whether `listen` may be an address other than loopback. */
  readonly allowNonLoopbackListen: boolean;
  /** The data listener's cap on open connections. */
  readonly maxConnections: number;
  readonly listenHeadersTimeoutSeconds: number;
  /** Undefined: the default for `listen`'s host (none on loopback). */
  readonly listenIdleTimeoutSeconds: number | undefined;
  /** How long `serve` keeps answering after SIGTERM before it closes the listeners. */
  readonly shutdownGraceSeconds: number;
  /** Whether App Secrets may be watched in every namespace without a label selector. */
  readonly allowClusterWideSecrets: boolean;
  /** Whether an App's upstream may be a loopback, unspecified or link-local address (ADR 48). */
  readonly allowLocalUpstreams: boolean;
  /** Whether an App with a `credential` is served, its upstream getting the Secret as `Authorization` (ADR 53). */
  readonly serveCredentials: boolean;
  /** Whether each App's TLS Secret is read, checked and pushed to the proxies (ADR 56). */
  readonly serveCertificates: boolean;
  /** Zero-hop: the proxies whose routing table the sidecar keeps; empty: hop mode only. */
  readonly push: readonly PushTargetConfig[];
}

/**
 * A co-located proxy the sidecar keeps the routing table of (zero-hop mode), each through the
 * path of a Unix socket in the volume only the sidecar and the proxy mount (ADR 46).
 */
export type PushTargetConfig =
  | {
      readonly kind: "haproxy";
      readonly socket: string;
      readonly map: string;
      readonly credentialsMap: string;
      /** The crt-list the sidecar adds each App's certificate to (`--serve-certificates`). */
      readonly crtList: string;
    }
  | { readonly kind: "caddy"; readonly socket: string }
  | { readonly kind: "nginx"; readonly socket: string };
