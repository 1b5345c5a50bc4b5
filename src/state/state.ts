// What the state file holds: the inputs of the last published Snapshot and how far each watch had
// got, so a restarted sidecar can serve at once and resume its watches without a list.
// Byte strings hold one character per byte (latin1), as SecretObject.data does.

import type { MirrorInputs } from "../mirror/inputs.ts";

/** The flags a state was written under; a state written under others is refused. */
export interface StateConfig {
  readonly registry: {
    readonly namespace: string;
    readonly name: string;
    readonly key: string;
  };
  readonly secrets: {
    /** The App Secret namespaces, each once, sorted; null: one cluster-wide watch. */
    readonly namespaces: readonly string[] | null;
    /** The App Secrets' label selector; null: none. */
    readonly labelSelector: string | null;
  };
  /**
   * `--serve-credentials` and `--serve-certificates`: which values the state keeps (ADR 68). A
   * state written with either off lacks bytes the other setting reads.
   */
  readonly served: { readonly credentials: boolean; readonly certificates: boolean };
}

/**
 * A state's place among the writes of one pod (README, "The state file"): what tells a file
 * replayed over a newer one, by the high-water mark written beside it (mark.ts).
 */
export interface Generation {
  /** Random, picked by the first write in a volume and kept by every later one. */
  readonly series: string;
  /** This write's number in its series: more than that of any write of the series before it. */
  readonly writes: number;
  /** Milliseconds since the epoch when the API server was last heard from; null: not yet. */
  readonly heardAt: number | null;
}

/**
 * The last-good state of one replica, as written to and read back from the state file: the
 * mirror's inputs (the Registry Secret, the present referenced App Secrets, the resourceVersion
 * each reflector had reached), and when and under which flags they were saved.
 */
export interface State extends MirrorInputs {
  /**
   * Milliseconds since the epoch when the owner last knew these inputs current: the age a warm
   * start measures. The owner sets it, so a quiet but healthy watch can refresh it.
   */
  readonly savedAt: number;
  readonly generation: Generation;
  readonly config: StateConfig;
}

/** The configuration in its canonical form: namespaces deduplicated and sorted. */
export function stateConfig(options: {
  readonly registryNamespace: string;
  readonly registryName: string;
  readonly registryKey: string;
  /** Empty: cluster-wide, as SidecarConfig.secretNamespaces. */
  readonly secretNamespaces: readonly string[];
  readonly secretSelector: string | undefined;
  readonly serveCredentials?: boolean;
  readonly serveCertificates?: boolean;
}): StateConfig {
  const namespaces = [...new Set(options.secretNamespaces)].sort();
  return {
    registry: {
      namespace: options.registryNamespace,
      name: options.registryName,
      key: options.registryKey,
    },
    secrets: {
      namespaces: namespaces.length === 0 ? null : namespaces,
      labelSelector: options.secretSelector || null,
    },
    served: {
      credentials: options.serveCredentials === true,
      certificates: options.serveCertificates === true,
    },
  };
}
