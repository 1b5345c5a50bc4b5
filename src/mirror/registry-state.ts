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
