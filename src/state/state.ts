// What the state file holds: the inputs of the last published Snapshot and how far each watch had
// got, so a restarted sidecar can serve at once and resume its watches without a list.
// Byte strings hold one character per byte (latin1), as SecretObject.data does.

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
}

/** The Registry Secret as the mirror last saw it. */
export type RegistrySecretState =
  | { readonly present: false }
  | {
      readonly present: true;
      readonly resourceVersion: string;
      /** The Registry key's value as bytes; null: the Secret lacks the key. */
      readonly value: string | null;
    };

/** One referenced App Secret: only the keys some App references, as bytes. */
export interface StoredSecret {
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly data: Readonly<Record<string, string>>;
}

/** How far one App Secret watch had got: a namespace, or null for the cluster-wide one. */
export interface ScopeVersion {
  readonly namespace: string | null;
  readonly resourceVersion: string;
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

/** The last-good state of one replica, as written to and read back from the state file. */
export interface State {
  /**
   * Milliseconds since the epoch when the owner last knew these inputs current: the age a warm
   * start measures. The owner sets it, so a quiet but healthy watch can refresh it.
   */
  readonly savedAt: number;
  readonly generation: Generation;
  readonly config: StateConfig;
  readonly registry: RegistrySecretState;
  /** Present referenced App Secrets; one absent here is absent (or unknown) to the mirror. */
  readonly secrets: readonly StoredSecret[];
  /** The resourceVersion each reflector had reached: one per configured App Secret scope. */
  readonly watches: {
    readonly registry: string;
    readonly secrets: readonly ScopeVersion[];
  };
}

/** The configuration in its canonical form: namespaces deduplicated and sorted. */
export function stateConfig(options: {
  readonly registryNamespace: string;
  readonly registryName: string;
  readonly registryKey: string;
  /** Empty: cluster-wide, as SidecarConfig.secretNamespaces. */
  readonly secretNamespaces: readonly string[];
  readonly secretSelector: string | undefined;
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
  };
}
