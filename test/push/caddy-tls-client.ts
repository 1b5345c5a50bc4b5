// A TLS client for the certificate tests: the certificate a proxy serves for an SNI name, and a
// request over TLS seen as `ask` sees one over plain HTTP (test/support/zero-hop.ts).

import { X509Certificate } from "node:crypto";
import https from "node:https";
import tls from "node:tls";
import type { ZeroHopAnswer } from "../support/zero-hop.ts";

/** The SHA-256 fingerprint of the certificate the proxy serves for `servername` (none: no SNI). */
export function served(port: number, servername?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      rejectUnauthorized: false,
      ...(servername === undefined ? {} : { servername }),
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error("handshake timed out")));
    socket.once("secureConnect", () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? "none";
      socket.destroy();
      resolve(fingerprint);
    });
    socket.once("error", reject);
  });
}

export const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256;

/** The request `ask` sends, over TLS with SNI `host`: the same view of the answer. */
export function askTls(port: number, host: string): Promise<ZeroHopAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: "127.0.0.1",
        port,
        servername: host,
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
          const one = (name: string) => (res.headers[name] as string | undefined) ?? null;
          resolve({
            status: res.statusCode ?? 0,
            reason: one("x-mirror-reason"),
            retryAfter: one("retry-after"),
            app: one("x-mirror-app"),
            echoed: json ? JSON.parse(text) : null,
            body: json ? "" : text,
          });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}
