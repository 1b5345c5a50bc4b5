// How an App's Secret value becomes the `Authorization` value its upstream gets (ADR 53,
// docs/serving.md "Credentials"). Pure; the value is bytes, one character per byte (ADR 20).

import type { Result } from "../result.ts";
import type { AppState, NotReadyReason } from "./types.ts";

/** Bytes of a credential's value: nginx's and HAProxy's header buffers hold it with room to spare. */
export const MAX_CREDENTIAL = 8_192;

/** Why a value cannot be an `Authorization` value. */
export type UnusableValue = "value-empty" | "value-too-long" | "value-not-a-header";

/** What each rule a value broke says, for a log line and the status API; never the value. */
export const UNUSABLE_RULES: Readonly<Record<Exclude<UnusableValue, "value-empty">, string>> = {
  "value-too-long": `the value is longer than ${MAX_CREDENTIAL} bytes`,
  "value-not-a-header":
    "the value holds a byte other than visible ASCII, space and tab (a CR, LF or NUL, say)",
};

/**
 * The header value a Secret's (non-empty) value makes: the value less one trailing `\n` or
 * `\r\n` (what `kubectl create secret --from-file` of an editor's file leaves), then held to the
 * header rules. A CR, LF or NUL would end or split the header in a proxy; nothing is escaped.
 */
export function credentialValue(value: string): Result<string, UnusableValue> {
  let end = value.length;
  if (end > 0 && value.charCodeAt(end - 1) === 0x0a) end--;
  if (end > 0 && end < value.length && value.charCodeAt(end - 1) === 0x0d) end--;
  if (end === 0) return { ok: false, error: "value-empty" };
  if (end > MAX_CREDENTIAL) return { ok: false, error: "value-too-long" };
  for (let i = 0; i < end; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c > 0x7e) return { ok: false, error: "value-not-a-header" };
  }
  return { ok: true, value: end === value.length ? value : value.slice(0, end) };
}

/** What `/v1/route` answers for an App not ready for `reason` (null: ready). */
export function stateOf(reason: NotReadyReason | null): AppState {
  switch (reason) {
    case null:
      return "ready";
    case "credentials-off":
      return "credentials-off";
    case "value-too-long":
    case "value-not-a-header":
      return "secret-unusable";
    default:
      return "secret-unavailable";
  }
}
