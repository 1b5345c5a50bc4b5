// Why a state file was not used. Each kind is one line of the start-up log and one metric label;
// a message names the file, sizes, versions and key ids, never a Secret byte.

/** Every way reading a state file can fail, in the order the reader checks them. */
export const STATE_ERROR_KINDS = [
  "missing",
  "unreadable",
  "too-large",
  "truncated",
  "not-a-state-file",
  "old-version",
  "future-version",
  "foreign-key",
  "corrupt",
  "malformed",
  "too-old",
  "saved-in-future",
  "other-config",
] as const;

export type StateErrorKind = (typeof STATE_ERROR_KINDS)[number];

/** Why a state file was refused: `kind` for code and metrics, `message` for the log line. */
export interface StateError {
  readonly kind: StateErrorKind;
  readonly message: string;
}

/** A StateError of `kind`. */
export const stateError = (kind: StateErrorKind, message: string): StateError => ({
  kind,
  message,
});
