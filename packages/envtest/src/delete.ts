/** DELETE of a Secret: preconditions, dry run, and the Success Status the real store answers. */

import { type SecretJSON, storeKey } from "./secret.ts";
import { conflict, deleted, failWith, notFound, type OrStatus, ok, type Status } from "./status.ts";
import type { EnvtestState } from "./store.ts";

/**
 * The DeleteOptions a delete honours: preconditions and dry run (propagation does not apply to
 * Secrets).
 */
export interface DeleteOptions {
  readonly preconditions?:
    | { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined }
    | undefined;
  readonly dryRun?: boolean;
}

/**
 * DELETE: removes the Secret, honouring uid and resourceVersion preconditions; answers the Success
 * Status.
 */
export function deleteSecret(
  state: EnvtestState,
  namespace: string,
  name: string,
  opts: DeleteOptions,
): OrStatus<{ status: Omit<Status, "code">; obj: SecretJSON }> {
  const key = storeKey(namespace, name);
  const existing = state.get(key);
  if (existing === undefined) return failWith(notFound("secrets", name));
  const m = existing.obj.metadata;
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== m.uid) {
    return failWith(
      conflict(
        "secrets",
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${m.uid}`,
      ),
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== m.resourceVersion) {
    return failWith(
      conflict(
        "secrets",
        name,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${m.resourceVersion}). The object might have been modified`,
      ),
    );
  }
  if (!opts.dryRun) state.remove(key);
  return ok({ status: deleted("secrets", name, m.uid), obj: existing.obj });
}
