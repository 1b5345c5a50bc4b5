// What a Mirror is made of, given by whoever assembles one.

import type { Clock } from "../clock.ts";
import type { Schedule } from "../coalescer.ts";
import type { ListWatch } from "../kube/cache/list-watch.ts";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import type { SecretScope } from "./fetch-secrets.ts";
import type { WarmStart } from "./inputs.ts";
import type { SharedReflectorSettings } from "./observed-reflector.ts";
import type { MirrorObserver } from "./observer.ts";
import type { RegistryChecker } from "./registry-checker.ts";
import type { SnapshotSink } from "./sink.ts";

export interface RegistrySource {
  /** Scoped to the one Registry Secret (a `metadata.name` field selector). */
  readonly listWatch: ListWatch;
  readonly namespace: string;
  readonly name: string;
  readonly key: string;
  readonly maxDecompressedBytes?: number;
  /**
   * Default false: an App whose upstream is a loopback, unspecified or link-local address is
   * refused, here and in a warm start's Registry, whose saved check is adopted only when it was
   * made under the same (ADR 48, ADR 77).
   */
  readonly allowLocalUpstreams?: boolean;
  /** Where its values are checked; default this thread, a microtask later (ADR 88). */
  readonly checker?: RegistryChecker;
}

export interface MirrorOptions {
  readonly registry: RegistrySource;
  /** One cluster-wide scope, or one per namespace (each with its selector). */
  readonly secrets: { readonly scopes: readonly SecretScope[] };
  readonly holder: SnapshotHolder;
  readonly watchTimeoutSeconds: number;
  /** Telemetry: metrics and logs. */
  readonly observer?: MirrorObserver;
  /** Every consumer of published Snapshots, told in this order (sink.ts). */
  readonly sinks?: readonly SnapshotSink[];
  readonly clock?: Clock;
  /** Milliseconds since the epoch, for `builtAt`. */
  readonly wallClock?: () => number;
  readonly random?: () => number;
  readonly schedule?: Schedule;
  /** Passed to every reflector (backoff and deadlines for tests). */
  readonly reflector?: SharedReflectorSettings["tuning"];
  /** Serve these inputs at once, and resume the watches from where they were saved. */
  readonly warm?: WarmStart;
  /**
   * `--serve-credentials`; default false: an App with a `credential` answers `credentials-off`.
   * Fixed for the mirror's life (`BuildMeta.serveCredentials`).
   */
  readonly serveCredentials?: boolean;
  /**
   * `--serve-certificates`; default false: no TLS Secret is read, an App's `tls` is `off`.
   * Fixed for the mirror's life (`BuildMeta.serveCertificates`).
   */
  readonly serveCertificates?: boolean;
}
