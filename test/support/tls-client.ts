// A TLS client for the certificate tests and the bench: which certificate a proxy serves for an
// SNI name, and a request over TLS. Certificates are self-signed: nothing is verified but what
// the test compares (the serial, the fingerprint).

import { X509Certificate } from "node:crypto";
import tls from "node:tls";

/** What identifies a served certificate. */
export interface ServedIdentity {
  /** Upper-case hex, as `ServedCertificate.serial` and `openssl x509 -serial` give it. */
  readonly serial: string;
  readonly fingerprint256: string;
}

/** The identity of a PEM certificate (the first of a chain), as `servedIdentity` reports it. */
export function identityOf(pem: string): ServedIdentity {
  const cert = new X509Certificate(pem);
  return { serial: cert.serialNumber.toUpperCase(), fingerprint256: cert.fingerprint256 };
}

/**
 * Completes one handshake with `servername` as SNI (null: none) and reports the certificate the
 * proxy served; rejects when the handshake fails or takes over `timeoutMs`.
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
      // A new handshake each time: a resumed session would not ask the proxy for a certificate.
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

/** One request over TLS with `servername` as SNI and `host` as Host: its status and body. */
export function requestOverTls(
  port: number,
  servername: string,
  host: string,
  path = "/",
): Promise<{ readonly status: number; readonly body: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error("request timed out")), 10_000);
    socket.once("secureConnect", () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
    );
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.once("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const head = text.indexOf("\r\n\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      if (status === 0) reject(new Error(`no HTTP answer over TLS for ${host}`));
      else resolve({ status, body: head < 0 ? "" : text.slice(head + 4) });
    });
  });
}
