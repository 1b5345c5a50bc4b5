// The TLS client side of nginx's certificate tests: which certificate a handshake got, named by
// the test, and a request over TLS in the form `ask` gives a plain one. Everything connects to
// 127.0.0.1 and trusts nothing (the tests compare fingerprints, not chains).

import { X509Certificate } from "node:crypto";
import https from "node:https";
import tls from "node:tls";
import type { ZeroHopAnswer, ZeroHopEchoed } from "../support/zero-hop.ts";

/** Names for certificates, by their SHA-256 fingerprint. */
export type CertificateNames = ReadonlyMap<string, string>;

export const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;

/**
 * The name of the certificate a new handshake gets for `servername` (undefined: no SNI), or
 * `unnamed` for one not in `names`; `failed: <code>` when the handshake fails.
 */
export function handshake(
  port: number,
  servername: string | undefined,
  names: CertificateNames,
): Promise<string> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      ...(servername === undefined ? {} : { servername }),
      rejectUnauthorized: false,
      session: undefined,
    });
    const timer = setTimeout(() => settle("failed: timeout"), 5_000);
    const settle = (name: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(name);
    };
    socket.once("secureConnect", () => {
      const peer = socket.getPeerX509Certificate();
      settle(peer === undefined ? "none" : (names.get(peer.fingerprint256) ?? "unnamed"));
    });
    socket.once("error", (e: NodeJS.ErrnoException) => settle(`failed: ${e.code ?? e.message}`));
  });
}

/** One GET over TLS with this SNI and Host, as `ask` reports a plain one. */
export function askOverTls(port: number, servername: string, host: string): Promise<ZeroHopAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: "127.0.0.1",
        port,
        servername,
        path: "/orders/42",
        headers: { host, connection: "close" },
        rejectUnauthorized: false,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const json = res.headers["content-type"] === "application/json";
          const one = (name: string) => {
            const value = res.headers[name];
            return typeof value === "string" ? value : null;
          };
          resolve({
            status: res.statusCode ?? 0,
            reason: one("x-mirror-reason"),
            retryAfter: one("retry-after"),
            app: one("x-mirror-app"),
            echoed: json ? (JSON.parse(text) as ZeroHopEchoed) : null,
            body: json ? "" : text,
          });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}
