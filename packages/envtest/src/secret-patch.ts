/**
 * PATCH of a Secret: picks the patch semantics from the Content-Type, applies the patch to the
 * stored object, and writes the result through the update path (or server-side apply), so patches
 * get the same validation, conflicts and no-op detection as PUT.
 */

import { applySecret } from "./apply.ts";
import { parseDocument, type SecretInput, secretFromValue, unknownSecretFields } from "./decode.ts";
import { applyJsonPatch } from "./json-patch.ts";
import { mergePatch, strategicMergePatch } from "./patch.ts";
import { storeKey } from "./secret.ts";
import {
  badRequest,
  failWith,
  notFound,
  type OrStatus,
  ok,
  unsupportedMediaType,
} from "./status.ts";
import type { EnvtestState } from "./store.ts";
import { updateSecret, type WriteOptions, type WriteResult } from "./writes.ts";

/** The patch semantics a PATCH Content-Type selects. */
type PatchType = "json" | "merge" | "strategic" | "apply";

const PATCH_TYPES: Readonly<Record<string, PatchType>> = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/apply-patch+yaml": "apply",
  "application/apply-patch+cbor": "apply",
};

/** Classifies a PATCH Content-Type, or the 415 the real server answers for others. */
export function patchTypeOf(contentType: string | undefined): OrStatus<PatchType> {
  const base = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const t = PATCH_TYPES[base];
  return t === undefined
    ? failWith(unsupportedMediaType(base, Object.keys(PATCH_TYPES).slice(0, 4)))
    : ok(t);
}

/** Write options plus server-side apply's `force`. */
interface PatchOptions extends WriteOptions {
  readonly force: boolean;
}

/** The outcome of a PATCH plus the fields a strict decoder would have refused. */
interface PatchOutcome {
  readonly result: WriteResult;
  readonly unknownFields: readonly string[];
}

/** Applies a PATCH request body to `{namespace}/{name}`. */
export function patchSecret(
  state: EnvtestState,
  namespace: string,
  name: string,
  body: Buffer,
  type: PatchType,
  opts: PatchOptions,
): OrStatus<PatchOutcome> {
  const doc = parseDocument(body, type === "apply" ? "yaml" : "json");
  if (!doc.ok) return doc;
  if (type === "apply") {
    const input = secretFromValue(doc.value);
    if (!input.ok) return input;
    if (!input.value.apiVersion || !input.value.kind) {
      return failWith(
        badRequest(
          "error decoding YAML: apiVersion and kind must be set in an apply configuration",
        ),
      );
    }
    const written = applySecret(state, namespace, name, input.value, opts);
    return written.ok
      ? ok({ result: written.value, unknownFields: unknownSecretFields(doc.value) })
      : written;
  }
  const existing = state.get(storeKey(namespace, name));
  if (existing === undefined) return failWith(notFound("secrets", name));
  let patched: unknown;
  if (type === "json") {
    const r = applyJsonPatch(existing.obj, doc.value);
    if (!r.ok) return r;
    patched = r.value;
  } else {
    if (typeof doc.value !== "object" || doc.value === null || Array.isArray(doc.value)) {
      return failWith(
        badRequest("json: cannot unmarshal array into Go value of type map[string]interface {}"),
      );
    }
    patched =
      type === "merge"
        ? mergePatch(existing.obj, doc.value)
        : strategicMergePatch(existing.obj, doc.value);
  }
  const input: OrStatus<SecretInput> = secretFromValue(patched);
  if (!input.ok) return input;
  const written = updateSecret(state, namespace, name, input.value, opts);
  return written.ok
    ? ok({ result: written.value, unknownFields: unknownSecretFields(patched) })
    : written;
}
