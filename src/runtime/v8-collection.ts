import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { err, ok, type Result } from "../result.ts";

/**
 * How long after the first Snapshot is published the collection runs. Long enough that the
 * `/readyz` 200 the publication allows is answered first; short enough that it runs before the
 * data plane sends traffic, which waits for the kubelet's next probe (every second at start-up)
 * and for the endpoints to carry the Pod (ADR 25).
 */
export const STARTUP_COLLECTION_DELAY_MS = 250;

/**
 * V8's most thorough collection (`gc({flavor: "last-resort"})`: mark-compact until nothing more
 * is freed, the young generation shrunk, free pages given back), without `--expose-gc` on the
 * command line: the flag is set only while one throwaway context is created, so no global `gc`
 * exists anywhere else. A runtime that refuses the flag is an expected failure.
 */
export function v8FullCollection(): Result<void, string> {
  let gc: unknown;
  try {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("typeof gc === 'function' ? gc : undefined");
  } catch (e) {
    return err(`V8's gc is not available: ${(e as Error).message}`);
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
  if (typeof gc !== "function") return err("V8's gc is not available in a new context");
  gc({ type: "major", execution: "sync", flavor: "last-resort" });
  return ok(undefined);
}
