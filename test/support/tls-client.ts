// The TLS client of the certificate tests and the bench: which certificate a proxy serves for an
// SNI name, and a request over TLS read as `ask` reads a plain one (zero-hop.ts). Certificates are
// self-signed: nothing is verified but what a test compares (a fingerprint, a serial).

import { X509Certificate } from "node:crypto";
import https from "node:https";
import tls from "node:tls";
import type { ZeroHopAnswer, ZeroHopEchoed } from "./zero-hop.ts";

/** What identifies a served certificate. */
export interface ServedIdentity {
  /** Upper-case hex, as `ServedCertificate.serial` and `openssl x509 -serial` give it. */
  readonly serial: string;
  readonly fingerprint256: string;
}

/** The identity of a PEM certificate (the first of a chain), as `servedIdentity` reports one. */
export function identityOf(pem: string): ServedIdentity {
  const cert = new X509Certificate(pem);
  return { serial: cert.serialNumber.toUpperCase(), fingerprint256: cert.fingerprint256 };
}

/** The SHA-256 fingerprint of a PEM certificate (the first of a chain), as node:tls shows one. */
export const fingerprintOf = (pem: string): string => new X509Certificate(pem).fingerprint256;

/**
 * Completes one new handshake (no session resumed) with `servername` as SNI (null: none) and
 * reports the certificate served; rejects when the handshake fails or takes over `timeoutMs`.
 */
export function servedIdentity(
  port: number,
  servername: string | null,
  timeoutMs = 5_000,
): Promise<ServedIdentity> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      ...(servername === null ? {} : { servername }),
      rejectUnauthorized: false,
      session: undefined,
    });
    const timer = setTimeout(() => socket.destroy(new Error("handshake timed out")), timeoutMs);
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      const cert = socket.getPeerX509Certificate();
      socket.destroy();
      if (cert === undefined) reject(new Error("no certificate served"));
      else
        resolve({ serial: cert.serialNumber.toUpperCase(), fingerprint256: cert.fingerprint256 });
    });
    socket.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** The fingerprint of the certificate served for `servername` (null: no SNI). */
export const servedFingerprint = async (port: number, servername: string | null) =>
  (await servedIdentity(port, servername)).fingerprint256;

/** One GET over TLS with SNI `servername` and Host `host`, as `ask` reports a plain one. */
export function askOverTls(
  port: number,
  servername: string,
  host: string,
  path = "/orders/42",
): Promise<ZeroHopAnswer> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: "127.0.0.1",
        port,
        servername,
        path,
        headers: { host, connection: "close" },
        rejectUnauthorized: false,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (c: Buffer) => chunks.push(c));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const json = response.headers["content-type"] === "application/json";
          const one = (name: string) => {
            const value = response.headers[name];
            return typeof value === "string" ? value : null;
          };
          resolve({
            status: response.statusCode ?? 0,
            reason: one("x-mirror-reason"),
            retryAfter: one("retry-after"),
            app: one("x-mirror-app"),
            echoed: json ? (JSON.parse(text) as ZeroHopEchoed) : null,
            body: json ? "" : text,
          });
        });
      },
    );
    request.on("error", reject);
    request.end();
  });
}
