// What a client sends to steer an upstream: `X-Mirror-*` headers the data planes set, in other
// cases, and names nobody sets; every one must be dropped before the upstream (ADR 52).

/** Forged `X-Mirror-*` headers, by name as the client writes it. */
export const FORGED_MIRROR_HEADERS: Readonly<Record<string, string>> = {
  "X-Mirror-App": "forged",
  "x-mirror-revision": "999999",
  "X-MIRROR-UPSTREAM": "http://127.0.0.1:9",
  "x-mirror-credential": "forged",
  "X-Mirror-Anything-Else": "forged",
};

/** `count` harmless header lines, to send before the forged ones. */
export const paddingHeaders = (count: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-padding-${i}`, "p"]));
