// The credentials the suite measures with (ADR 53): every App's `credential` in the Registries
// that carry one, and the sizes of the values it sends as `Authorization`.

/** Every App's credential where the suite's Apps carry one. */
export const CREDENTIAL = { prefix: "Bearer " } as const;

/** The bytes of an App Secret's `token`, as the suite's clusters seed it. */
export const VALUE_BYTES = 1024;

/**
 * The credential sizes measured (`--credential-bytes` changes them): an API key's (40 bytes), and
 * the Secrets' 1 KiB (a signed JWT's size). The value travels with every request, and Caddy takes
 * its whole table, every App's value in it, at each push: the size is part of both.
 */
export const CREDENTIAL_BYTES: readonly number[] = [40, VALUE_BYTES];

/** The App Secret key holding a credential of `bytes`: the seeded `token`, or `credential-<bytes>`. */
export const credentialKey = (bytes: number) =>
  bytes === VALUE_BYTES ? "token" : `credential-${bytes}`;

/** The keys, and their values' bytes, a cluster's App Secrets need besides `token` for `sizes`. */
export const extraKeys = (sizes: readonly number[]): Record<string, number> =>
  Object.fromEntries(sizes.filter((b) => b !== VALUE_BYTES).map((b) => [credentialKey(b), b]));

/**
 * What each proxy alone sets as `Authorization` on every upstream request beside the modes with
 * credentials of `bytes` on: the same prefix and a value of the same size, fixed, no Secret's.
 */
export const fixedAuthorization = (bytes: number) => `${CREDENTIAL.prefix}${"k".repeat(bytes)}`;

/** "1 KiB", "40 B". */
export const bytesLabel = (n: number) => (n % 1024 === 0 ? `${n / 1024} KiB` : `${n} B`);
