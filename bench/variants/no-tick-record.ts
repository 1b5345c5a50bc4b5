// Diagnostic only: the artifact without the nextTick record of ADR 21 (the devices suite builds
// it with this module in place of src/runtime/tick-record.ts).

/** Keeps nothing. */
export function keepTickRecord(): void {}
