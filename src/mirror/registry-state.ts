import type { SecretObject } from "../kube/list-watch.ts";
import { parseRegistry } from "../registry/parse.ts";
import type { Registry } from "../registry/schema.ts";
import type { RegistryStatus } from "../snapshot/types.ts";

/** The Registry Secret as the watch last saw it. */
export type RegistrySecret =
  | { readonly present: false }
  | {
      readonly present: true;
      readonly resourceVersion: string;
      readonly value: string | undefined /* base64; undefined: key missing */;
    };

/** The Registry to serve and what to report about it. */
export interface ServedRegistry {
  readonly registry: Registry | null;
  readonly status: RegistryStatus;
}

export interface RegistryOptions {
  readonly key: string;
  readonly namespace: string;
  readonly maxDecompressedBytes?: number;
}

/**
 * Decides what to serve after the Registry Secret changed (SPEC §3): absent is a valid, empty
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
  const parsed = parseRegistry(Buffer.from(secret.value, "base64"), {
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

/**
 * Follows the Registry Secret's events and decides what to serve, parsing each distinct value
 * once: the same value seen again (a relist, a label edit) reuses the parsed Registry.
 */
export class RegistryTracker {
  readonly #options: RegistryOptions & { readonly name: string };
  #secret: RegistrySecret = { present: false };
  #parsed: { readonly value: string; readonly registry: Registry } | null = null;

  constructor(options: RegistryOptions & { readonly name: string }) {
    this.#options = options;
  }

  /** Records an event; false when it is not about the Registry Secret (and changes nothing). */
  observe(deleted: boolean, object: SecretObject): boolean {
    const { namespace, name, resourceVersion } = object.metadata;
    if (namespace !== this.#options.namespace || name !== this.#options.name) return false;
    this.#secret = deleted
      ? { present: false }
      : { present: true, resourceVersion, value: object.data?.[this.#options.key] };
    return true;
  }

  /** What to serve now, given the Registry served so far (the last good one). */
  serve(lastGood: Registry | null): ServedRegistry {
    const secret = this.#secret;
    if (secret.present && secret.value !== undefined && secret.value === this.#parsed?.value) {
      const status = { present: true, resourceVersion: secret.resourceVersion, error: null };
      return { registry: this.#parsed.registry, status };
    }
    const served = serveRegistry(secret, lastGood, this.#options);
    if (secret.present && secret.value !== undefined && served.status.error === null) {
      this.#parsed = { value: secret.value, registry: served.registry! };
    }
    return served;
  }
}
