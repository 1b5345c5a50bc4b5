// The Secrets of the standalone API server (fake-api.ts): one namespace, one resourceVersion
// counter, and a bounded history of changes that a watch resumes from. A restart forgets the
// history, as kube-apiserver's watch cache does when it restarts: every resume from before it is
// then too old and answered 410.

/** A Secret as the API serves it: JSON with base64 values. */
export interface StoredSecret {
  readonly apiVersion: "v1";
  readonly kind: "Secret";
  readonly metadata: {
    readonly namespace: string;
    readonly name: string;
    readonly resourceVersion: string;
    readonly uid: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly type: "Opaque";
  /** Absent when empty, as the API omits an empty map. */
  readonly data?: Readonly<Record<string, string>>;
}

/** One change, as a watch sends it. */
export interface Change {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly object: StoredSecret;
  /** Its resourceVersion, as a number. */
  readonly rv: number;
}

/** Which Secrets a request selects: `metadata.name=` and label equalities. */
export interface Selector {
  readonly name?: string;
  readonly labels: readonly (readonly [string, string])[];
}

/** Parses the fieldSelector and labelSelector the sidecar sends (equality only). */
export function selectorOf(query: URLSearchParams): Selector {
  const field = query.get("fieldSelector") ?? "";
  const name = /(?:^|,)metadata\.name=([^,]*)/.exec(field)?.[1];
  const labels = (query.get("labelSelector") ?? "")
    .split(",")
    .filter((term) => term.includes("="))
    .map((term) => {
      const [k, v] = term.split("=") as [string, string];
      return [k.trim(), v.trim()] as const;
    });
  return { ...(name === undefined ? {} : { name }), labels };
}

/** Whether a Secret is selected. */
export function selects(s: Selector, secret: StoredSecret): boolean {
  if (s.name !== undefined && secret.metadata.name !== s.name) return false;
  return s.labels.every(([k, v]) => secret.metadata.labels?.[k] === v);
}

/** Changes kept for resumes: enough for minutes of this scenario's writes. */
const HISTORY = 10_000;

/** The store; `onChange` hears every write (the open watches). */
export class SecretStore {
  readonly namespace: string;
  readonly #secrets = new Map<string, StoredSecret>();
  #history: Change[] = [];
  #rv = 1;
  /** The oldest resourceVersion a watch may resume from. */
  #oldest = 1;
  readonly #listeners = new Set<(change: Change) => void>();

  constructor(namespace: string) {
    this.namespace = namespace;
  }

  /** The current resourceVersion. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** Writes a Secret's data (text as UTF-8) and labels; returns its new resourceVersion. */
  put(
    name: string,
    data: Readonly<Record<string, string | Uint8Array>>,
    labels?: Record<string, string>,
  ): string {
    const before = this.#secrets.get(name);
    this.#rv += 1;
    const encoded: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) encoded[k] = Buffer.from(v).toString("base64");
    const object: StoredSecret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        namespace: this.namespace,
        name,
        resourceVersion: String(this.#rv),
        uid: before?.metadata.uid ?? `uid-${name}`,
        ...(labels === undefined ? {} : { labels }),
      },
      type: "Opaque",
      ...(Object.keys(encoded).length === 0 ? {} : { data: encoded }),
    };
    this.#secrets.set(name, object);
    const change: Change = {
      type: before === undefined ? "ADDED" : "MODIFIED",
      object,
      rv: this.#rv,
    };
    this.#history.push(change);
    if (this.#history.length > HISTORY) {
      this.#history = this.#history.slice(-HISTORY);
      this.#oldest = this.#history[0]!.rv - 1;
    }
    for (const listener of this.#listeners) listener(change);
    return object.metadata.resourceVersion;
  }

  /** Every selected Secret, by name. */
  list(selector: Selector): StoredSecret[] {
    if (selector.name !== undefined) {
      const one = this.#secrets.get(selector.name);
      return one !== undefined && selects(selector, one) ? [one] : [];
    }
    return [...this.#secrets.values()]
      .filter((s) => selects(selector, s))
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  }

  get(name: string): StoredSecret | undefined {
    return this.#secrets.get(name);
  }

  /**
   * The changes after `from` a watch resumes with, or undefined when `from` is older than the
   * history kept (410 Gone).
   */
  since(from: number): Change[] | undefined {
    if (from < this.#oldest) return undefined;
    return this.#history.filter((c) => c.rv > from);
  }

  /**
   * Forgets the history, as a restarted watch cache does: it starts at a resourceVersion past
   * every one a client holds (a cluster's other writes moved it on meanwhile), so every resume
   * from before is too old.
   */
  forgetHistory(): void {
    this.#history = [];
    this.#rv += 1;
    this.#oldest = this.#rv;
  }

  /** Subscribes to writes; returns the unsubscribe. */
  subscribe(listener: (change: Change) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
