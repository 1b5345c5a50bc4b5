// Whether a state that decrypted may be served: young enough, and written under this
// configuration. Pure: the time and the configuration are the caller's.

import { err, ok, type Result } from "../result.ts";
import { type StateError, stateError } from "./errors.ts";
import type { StateConfig } from "./state.ts";

const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/**
 * How far after `now` a state may say it was saved: the skew between two clocks that write and
 * read the same volume, not an age. A state further ahead would stay young past its max age.
 */
export const FUTURE_SKEW_MS = 5 * 60_000;

/**
 * Ok when the state was saved at most maxAgeMs before `now` (both ms since the epoch), and at
 * most FUTURE_SKEW_MS after it: further ahead, a clock is wrong and the state's age is unknown.
 */
export function checkAge(savedAt: number, now: number, maxAgeMs: number): Result<void, StateError> {
  const age = now - savedAt;
  if (age > maxAgeMs)
    return err(
      stateError(
        "too-old",
        `saved ${seconds(age)} ago, more than the ${seconds(maxAgeMs)} allowed`,
      ),
    );
  if (-age > FUTURE_SKEW_MS)
    return err(
      stateError(
        "saved-in-future",
        `saved ${seconds(-age)} after now by this clock, more than the ${seconds(FUTURE_SKEW_MS)} of clock skew allowed`,
      ),
    );
  return ok(undefined);
}

const show = (value: string | null): string => (value === null ? "none" : `'${value}'`);
const showNamespaces = (namespaces: readonly string[] | null): string =>
  namespaces === null ? "cluster-wide" : `namespaces ${[...new Set(namespaces)].sort().join(",")}`;

/** Ok when `stored` is `expected`; otherwise `other-config`, naming the first field that differs. */
export function checkConfig(stored: StateConfig, expected: StateConfig): Result<void, StateError> {
  const differs = (field: string, was: string, now: string) =>
    err(stateError("other-config", `written under ${field} ${was}, configured now: ${now}`));
  for (const field of ["namespace", "name", "key"] as const) {
    const [was, now] = [stored.registry[field], expected.registry[field]];
    if (was !== now) return differs(`Registry ${field}`, show(was), show(now));
  }
  const [was, now] = [stored.secrets.namespaces, expected.secrets.namespaces];
  if (showNamespaces(was) !== showNamespaces(now))
    return differs("App Secret scopes", showNamespaces(was), showNamespaces(now));
  const [wasSelector, nowSelector] = [stored.secrets.labelSelector, expected.secrets.labelSelector];
  if (wasSelector !== nowSelector)
    return differs("label selector", show(wasSelector), show(nowSelector));
  for (const field of ["credentials", "certificates"] as const) {
    const [was, now] = [stored.served[field], expected.served[field]];
    if (was !== now) return differs(`--serve-${field}`, String(was), String(now));
  }
  return ok(undefined);
}
