// Diagnostic only: the artifact without the full collection after start of ADR 25 (the devices
// suite builds it with this module in place of src/runtime/v8-collection.ts).

import { ok, type Result } from "../../src/result.ts";

export { STARTUP_COLLECTION_DELAY_MS } from "../../src/runtime/v8-collection.ts";

/** Collects nothing. */
export function v8FullCollection(): Result<void, string> {
  return ok(undefined);
}
