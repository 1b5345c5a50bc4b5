// What nginx's certificate tests read of a handshake: the certificate it got, named by the test,
// or how it failed (test/support/tls-client.ts does the handshake).

import { servedIdentity } from "../support/tls-client.ts";

/** Names for certificates, by their SHA-256 fingerprint. */
export type CertificateNames = ReadonlyMap<string, string>;

/**
 * The name of the certificate a new handshake gets for `servername` (undefined: no SNI), or
 * `unnamed` for one not in `names`; `failed: <code>` when the handshake fails.
 */
export function handshake(
  port: number,
  servername: string | undefined,
  names: CertificateNames,
): Promise<string> {
  return servedIdentity(port, servername ?? null).then(
    (got) => names.get(got.fingerprint256) ?? "unnamed",
    (e: NodeJS.ErrnoException) =>
      `failed: ${e.code ?? (e.message === "handshake timed out" ? "timeout" : e.message)}`,
  );
}
