/** Writes made through the programmatic handle rather than the API, under the `envtest` manager. */
import type { SecretJSON } from "./secret.ts";
import { storeKey } from "./secret.ts";
import type { EnvtestState } from "./store.ts";
import { createSecret, updateSecret } from "./writes.ts";

/** A Secret to write directly. `data` strings are UTF-8 text; Uint8Array values are raw bytes. */
export interface DirectSecret {
  readonly namespace: string;
  readonly name: string;
  readonly data?: Readonly<Record<string, string | Uint8Array>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly type?: string;
}

const MANAGER = "envtest";

function toBase64(data: Readonly<Record<string, string | Uint8Array>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [
      k,
      (typeof v === "string" ? Buffer.from(v, "utf8") : Buffer.from(v)).toString("base64"),
    ]),
  );
}

/**
 * Creates or replaces a Secret through the same path as an API write (validation, no-op detection,
 * events); fields `s` leaves out keep their stored values. Throws on invalid input: a direct write
 * is the test's own, so a refusal is a bug in the test.
 */
export function applyDirect(state: EnvtestState, s: DirectSecret): SecretJSON {
  const existing = state.get(storeKey(s.namespace, s.name))?.obj;
  const input = {
    metadata: {
      name: s.name,
      namespace: s.namespace,
      labels: s.labels ?? existing?.metadata.labels,
      annotations: s.annotations ?? existing?.metadata.annotations,
      finalizers: existing?.metadata.finalizers,
      ownerReferences: existing?.metadata.ownerReferences,
    },
    data: s.data === undefined ? existing?.data : toBase64(s.data),
    type: s.type ?? existing?.type,
    immutable: existing?.immutable,
  };
  const r = existing
    ? updateSecret(state, s.namespace, s.name, input, { manager: MANAGER })
    : createSecret(state, s.namespace, input, { manager: MANAGER });
  if (!r.ok) throw new Error(r.failure.status.message);
  return r.value.obj;
}
