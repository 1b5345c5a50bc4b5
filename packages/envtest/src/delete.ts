/** DELETE of a Secret: preconditions, dry run, and the Success Status the real store answers. */
import { err, ok, type Result } from "./result.ts";
import { type SecretJSON, secretKey } from "./secret.ts";
import { type ApiError, conflict, deleted, notFound, type Status } from "./status.ts";
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
): Result<{ status: Omit<Status, "code">; obj: SecretJSON }, ApiError> {
  const key = secretKey(namespace, name);
  const existing = state.get(key);
  if (existing === undefined) return err(notFound("secrets", name));
  const m = existing.obj.metadata;
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== m.uid) {
    return err(
      conflict(
        "secrets",
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${m.uid}`,
      ),
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== m.resourceVersion) {
    return err(
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
