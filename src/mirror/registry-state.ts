import type { SecretObject } from "../kube/cache/list-watch.ts";
import { parseRegistry } from "../registry/parse.ts";
import type { Registry } from "../registry/schema.ts";
import type { RegistryStatus } from "../snapshot/types.ts";
import type { RegistryInput } from "./inputs.ts";

/** The Registry Secret as the watch last saw it. */
type RegistrySecret =
  | { readonly present: false }
  | {
      readonly present: true;
      readonly resourceVersion: string;
      readonly value: string | undefined /* bytes, one character each; undefined: key missing */;
    };

/** The Registry to serve and what to report about it. */
export interface ServedRegistry {
  readonly registry: Registry | null;
  readonly status: RegistryStatus;
}

interface RegistryOptions {
  readonly key: string;
  readonly namespace: string;
  readonly maxDecompressedBytes?: number;
}

/**
 * Decides what to serve after the Registry Secret changed (ADR 4): absent is a valid, empty
 * Registry; a missing key or a malformed value keeps the last good Registry and reports the error.
 */
export function serveRegistry(
  secret: RegistrySecret,
  lastGood: Registry | null,
  options: RegistryOptions,
): ServedRegistry {
  if (!secret.present)
    return { registry: null, status: { present: false, resourceVersion: null, error: null } };
  const keep = (error: string): ServedRegistry => ({
    registry: lastGood,
    status: { present: true, resourceVersion: secret.resourceVersion, error },
  });
  if (secret.value === undefined)
    return keep(`invalid registry: key '${options.key}' is missing from the Secret`);
  const parsed = parseRegistry(Buffer.from(secret.value, "latin1"), {
    defaultNamespace: options.namespace,
    ...(options.maxDecompressedBytes === undefined
      ? {}
      : { maxDecompressedBytes: options.maxDecompressedBytes }),
  });
  if (!parsed.ok) return keep(parsed.error.message);
  return {
    registry: parsed.value,
    status: { present: true, resourceVersion: secret.resourceVersion, error: null },
  };
}

/** What to serve, and whether the newest value is a refusal not reported before. */
export interface TrackedRegistry extends ServedRegistry {
  readonly newlyRefused: boolean;
}

/**
 * Follows the Registry Secret's events and decides what to serve. Values are parsed lazily, when
 * `serve` is called, and each distinct good value once (a relist or a label edit reuses it). When
 * the newest value is refused, the last good one is the newest good value the watch delivered,
 * even one never served because a later value replaced it first; a deletion in between makes
 * the last good Registry the empty one.
 */
export class RegistryTracker {
  readonly #options: RegistryOptions & { readonly name: string };
  /** Values observed since the last `serve`, oldest first; the last is the current one. */
  #unserved: RegistrySecret[] = [];
  #current: RegistrySecret = { present: false };
  #parsed: { readonly value: string; readonly registry: Registry } | null = null;
  #lastRefused: string | undefined;
  #served: Registry | null = null;

  constructor(options: RegistryOptions & { readonly name: string }) {
    this.#options = options;
  }

  /** Records an event; false when it is not about the Registry Secret (and changes nothing). */
  observe(deleted: boolean, object: SecretObject): boolean {
    const { namespace, name, resourceVersion } = object.metadata;
    if (namespace !== this.#options.namespace || name !== this.#options.name) return false;
    this.#current = deleted
      ? { present: false }
      : { present: true, resourceVersion, value: ownValue(object.data, this.#options.key) };
    this.#unserved.push(this.#current);
    return true;
  }

  /** The Registry Secret as the watch last saw it. */
  get current(): RegistryInput {
    const c = this.#current;
    if (!c.present) return c;
    return { present: true, resourceVersion: c.resourceVersion, value: c.value ?? null };
  }

  /** True when events arrived since the last `serve`. */
  get hasUnserved(): boolean {
    return this.#unserved.length > 0;
  }

  /** The Registry the last `serve` decided on (null before the first, or when empty). */
  get served(): Registry | null {
    return this.#served;
  }

  /** What to serve now, given the events so far and the Registry served last. */
  serve(): TrackedRegistry {
    const unserved = this.#unserved;
    this.#unserved = [];
    const served = this.#served;
    const current = this.#serveOne(this.#current, () => this.#fallback(unserved, served));
    const value = this.#current.present ? this.#current.value : undefined;
    const refused = current.status.error !== null;
    const newlyRefused = refused && (value === undefined || value !== this.#lastRefused);
    this.#lastRefused = refused ? value : undefined;
    this.#served = current.registry;
    return { ...current, newlyRefused };
  }

  /** The newest good Registry among values delivered before the current one, else `served`. */
  #fallback(unserved: readonly RegistrySecret[], served: Registry | null): Registry | null {
    for (let i = unserved.length - 2; i >= 0; i--) {
      const older = unserved[i]!;
      if (!older.present) return null;
      const tried = this.#serveOne(older, () => null);
      if (tried.status.error === null) return tried.registry;
    }
    return served;
  }

  #serveOne(secret: RegistrySecret, lastGood: () => Registry | null): ServedRegistry {
    if (secret.present && secret.value !== undefined && secret.value === this.#parsed?.value) {
      const status = { present: true, resourceVersion: secret.resourceVersion, error: null };
      return { registry: this.#parsed.registry, status };
    }
    // Parse first: the fallback, which may parse older values, is needed only on a refusal.
    const served = serveRegistry(secret, null, this.#options);
    if (served.status.error === null) {
      if (secret.present && secret.value !== undefined) {
        this.#parsed = { value: secret.value, registry: served.registry! };
      }
      return served;
    }
    return { registry: lastGood(), status: served.status };
  }
}

/** The value under `key` when the data has that key of its own. */
function ownValue(
  data: Readonly<Record<string, string>> | undefined,
  key: string,
): string | undefined {
  return data !== undefined && Object.hasOwn(data, key) ? data[key] : undefined;
}
