// Diagnostic only: the artifact without the collection after start of ADR 25 (the devices suite
// builds it with this module in place of src/runtime/start-up-collection.ts, everywhere or in the
// data thread only).

import { ok, type Result } from "../../src/result.ts";

export * from "../../src/runtime/start-up-collection.ts";

/** Collects nothing. */
export function v8FullCollection(): Result<void, string> {
  return ok(undefined);
}
