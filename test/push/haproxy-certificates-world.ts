// What the HAProxy certificate tests use: which certificate a handshake gets, a request over TLS
// read as the plain-HTTP client reads one, Snapshots whose Apps serve certificates, and a relay
// in front of the stats socket that records each command's first line (never a payload).

import { createConnection, createServer, type Server } from "node:net";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import type { TestCertificate } from "../support/certificates.ts";
import { tlsSecretData } from "../support/certificates.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";

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
