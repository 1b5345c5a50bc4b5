// Where a Registry value is checked: the tracker asks a `RegistryChecker`, which the sidecar
// backs with a thread of its own (sidecar/registry-thread.ts, ADR 88) and tests with this one.

import { createHash } from "node:crypto";
import { parseRegistry } from "../registry/parse.ts";
import type { CheckedUnder } from "../registry/rules.ts";

/** What `parseRegistry` made of a value: its Registry and refused entries, or its refusal. */
export type ParseOutcome = ReturnType<typeof parseRegistry>;

/** One value's check: the digest of its bytes and what the parse made of it. */
export interface ValueCheck {
  readonly contentHash: string;
  readonly parsed: ParseOutcome;
}

/**
 * Checks Registry values, maybe off this thread. Its contract: the very `checkValue` outcome,
 * equal as a whole value, for every value and options; rejects only on a bug.
 */
export interface RegistryChecker {
  check(value: string, under: CheckedUnder): Promise<ValueCheck>;
}

/** A digest of a value's bytes: equal on every replica that holds the same value. */
export function contentHash(value: string): string {
  return createHash("sha256").update(value, "latin1").digest("hex").slice(0, 16);
}

/** Checks a value (its bytes, one character per byte) on the calling thread. */
export function checkValue(value: string, under: CheckedUnder): ValueCheck {
  const parsed = parseRegistry(Buffer.from(value, "latin1"), {
    defaultNamespace: under.defaultNamespace,
    allowLocalUpstreams: under.allowLocalUpstreams,
    maxDecompressedBytes: under.maxDecompressedBytes,
  });
  return { contentHash: contentHash(value), parsed };
}

/** Checks every value on the calling thread, a microtask later. */
export const INLINE_CHECKER: RegistryChecker = {
  check: (value, under) => Promise.resolve(checkValue(value, under)),
};
