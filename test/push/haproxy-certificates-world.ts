// What the HAProxy certificate tests use: which certificate a handshake gets, a request over TLS
// read as the plain-HTTP client reads one, Snapshots whose Apps serve certificates, and a relay
// in front of the stats socket that records each command's first line (never a payload).

import { X509Certificate } from "node:crypto";
import https from "node:https";
import { createConnection, createServer, type Server } from "node:net";
import tls from "node:tls";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import type { TestCertificate } from "../support/certificates.ts";
import { tlsSecretData } from "../support/certificates.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import type { ZeroHopAnswer, ZeroHopEchoed } from "../support/zero-hop.ts";

/** The SHA-256 fingerprint of a PEM certificate (the first of a chain), as node:tls shows it. */
export const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;

/** The fingerprint of the certificate HAProxy serves on `port` for `servername` (null: no SNI). */
export function servedFor(port: number, servername: string | null): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      ...(servername === null ? {} : { servername }),
      rejectUnauthorized: false,
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error("handshake timed out")));
    socket.once("secureConnect", () => {
      const served = socket.getPeerX509Certificate()?.fingerprint256 ?? "none";
      socket.destroy();
      resolve(served);
    });
    socket.once("error", reject);
  });
}

/** One request over TLS with SNI `servername`, read as `ask` (test/support/zero-hop.ts) reads one. */
export function askTls(port: number, servername: string, host: string): Promise<ZeroHopAnswer> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: "127.0.0.1",
        port,
        servername,
        path: "/orders/42",
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
          const one = (name: string) => (response.headers[name] as string | undefined) ?? null;
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

/** An App with a TLS Secret `<name>-tls` and its credentials Secret. */
export const tlsApp = (name: string, hostnames: string[], upstream: string): AppInput => ({
  name,
  hostnames,
  upstream,
  tls: `${name}-tls`,
});

/** Each App's certificate and the resourceVersion of its TLS Secret. */
export type Certificates = Readonly<Record<string, { cert: TestCertificate; version: string }>>;

const secretsFor = (apps: readonly AppInput[], certificates: Certificates) =>
  secretsOf([
    ...apps.map((a): [string, ReturnType<typeof secretData>] => [
      `apps/${a.name}-credentials`,
      secretData({ token: "t" }),
    ]),
    ...Object.entries(certificates).map(([app, c]): [string, ReturnType<typeof secretData>] => [
      `apps/${app}-tls`,
      secretData(tlsSecretData(c.cert), c.version),
    ]),
  ]);

const at = (revision: number) => ({ ...meta(revision, Date.now()), serveCertificates: true });

/** A Snapshot of `apps` serving `certificates`, at `revision`. */
export const servedSnapshot = (
  apps: readonly AppInput[],
  certificates: Certificates,
  revision: number,
): Snapshot => build(registryOf([...apps]), secretsFor(apps, certificates), at(revision));

/** `previous` after `app`'s TLS Secret changed to `certificates[app]`: a rotation, as the mirror builds one. */
export const rotated = (
  previous: Snapshot,
  apps: readonly AppInput[],
  certificates: Certificates,
  app: string,
): Snapshot =>
  rebuildForSecrets(
    previous,
    [{ namespace: "apps", name: `${app}-tls` }],
    secretsFor(apps, certificates),
    at(previous.revision + 1),
  );

/** A Unix socket that passes every connection on to `socket`, recording each command's verb. */
export interface RuntimeRelay {
  /** The first line of each command sent, `<<` and payload cut. */
  readonly commands: string[];
  close(): Promise<void>;
}

export async function startRuntimeRelay(path: string, socket: string): Promise<RuntimeRelay> {
  const commands: string[] = [];
  const server: Server = createServer((client) => {
    const upstream = createConnection({ path: socket });
    let first = true;
    client.on("data", (d: Buffer) => {
      if (first) commands.push(d.toString("latin1").split("\n", 1)[0]!.replace(/ <<$/, ""));
      first = false;
      upstream.write(d);
    });
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(path, r));
  return {
    commands,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
