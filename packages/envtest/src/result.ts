/** An expected failure is a value, not an exception: exceptions are for bugs. */
export type Result<T, E> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: E };

/** Wraps a value as a success. */
export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

/** Wraps an error as a failure. */
export function err<E>(error: E): { readonly ok: false; readonly error: E } {
  return {
    ok: false,
    error,
  };
}
