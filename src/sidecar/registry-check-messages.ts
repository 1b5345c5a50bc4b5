// What the main thread and the Registry check thread (ADR 88) tell each other.

import type { ParseOutcome } from "../mirror/registry-checker.ts";
import type { CheckedUnder } from "../registry/rules.ts";
import type { RegistryColumns } from "../state/registry-columns.ts";

/** Check `value` (its bytes, one character per byte) under `under`; answer with `id`. */
export interface CheckRequest {
  readonly id: number;
  readonly value: string;
  readonly under: CheckedUnder;
}

/**
 * A value's check: a good one as the state file's columns (ADR 77), a few strings and arrays of
 * numbers that clone in a few milliseconds where 100k App objects take hundreds; or the refusal.
 */
export type CheckAnswer =
  | { readonly id: number; readonly columns: RegistryColumns }
  | {
      readonly id: number;
      readonly contentHash: string;
      readonly refused: Extract<ParseOutcome, { ok: false }>["error"];
    };
