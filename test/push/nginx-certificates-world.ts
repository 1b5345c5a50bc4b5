// The world of nginx's certificate tests: the real nginx with the shipped zero-hop nginx.conf, a
// relay that records the pushes, an echo upstream, named test certificates, and Apps a
// (a.example.com and *.a.example.com), b (b.example.com), each with a TLS Secret, and c
// (c.example.com) without; Snapshots built and rebuilt as the mirror does, with every push's
// failure kept for the check that no key shows in one. Every TLS Secret written gets a new
// resourceVersion, so it is checked again.

import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import type { PushTarget } from "../../src/push/target.ts";
import { ok } from "../../src/result.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { release } from "../support/release.ts";
import { fingerprintOf as fingerprint } from "../support/tls-client.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { type EchoUpstreams, startEchoUpstreams } from "../support/zero-hop.ts";
import { startZeroHopNginx, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { type SocketRelay, startSocketRelay } from "../support/zero-hop-relay.ts";
import { handshake } from "./nginx-certificates-tls.ts";

/** App a's hostnames, which its certificates cover. */
export const A_NAMES = ["a.example.com", "*.a.example.com"];

export interface CertificateWorld {
  readonly dir: string;
  readonly proxy: ZeroHopProxy;
  /** Pushes through the relay. */
  readonly target: PushTarget;
  /** Test certificates by name; `names` names them (and the default one) by fingerprint. */
  readonly certs: Map<string, TestCertificate>;
  readonly names: Map<string, string>;
  /** Every failure message a push returned, or a test added. */
  readonly errors: string[];
  /** The TLS Secret of each App that has one: its certificate's name and version. */
  readonly tlsOf: Map<string, { cert: string; version: number }>;
  /** Makes a certificate for `hostnames` named `name`. */
  named(name: string, hostnames: readonly string[]): void;
  /**
   * A Snapshot of every App but those in `without`, at a new revision (or `revision`) built now
   * (or at `builtAt`).
   */
  build(options?: { readonly without?: readonly string[]; readonly revision?: number }): Snapshot;
  /**
   * `from` after App `app`'s TLS Secret came to hold certificate `cert` (null: was deleted), as
   * the mirror rebuilds, now or at `builtAt`.
   */
  rotated(from: Snapshot, app: string, cert: string | null, builtAt?: number): Snapshot;
  /** Pushes `view` through the target, which must succeed. */
  pushed(view: Snapshot, options?: { whole: boolean }): Promise<void>;
  /** The name of the certificate a new handshake gets for each SNI name. */
  served(servernames: readonly (string | undefined)[]): Promise<string[]>;
  /** Whether nginx holds exactly `view`'s table, by the digest the pusher compares (ADR 51). */
  holds(view: Snapshot): Promise<boolean>;
  /** The table pushes that went through the relay, `PUT` or `PATCH`. */
  pushes(): string[];
  close(): Promise<void>;
}

/** Starts nginx in a new temporary directory; the certificates a1 and b1 are made, a's and b's. */
export async function startCertificateWorld(binary: string): Promise<CertificateWorld> {
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
  const upstreams: EchoUpstreams = await startEchoUpstreams(1);
  const proxy = await startZeroHopNginx(binary, dir);
  const relay: SocketRelay = await startSocketRelay(join(dir, "relay.sock"), proxy.socket);
  const target = nginxTarget({ socket: join(dir, "relay.sock") });
  const certs = new Map<string, TestCertificate>();
  const defaultPem = readFileSync(join(dir, "default-certificate/default.pem"), "latin1");
  const names = new Map([[fingerprint(defaultPem), "default"]]);
  const errors: string[] = [];
  const tlsOf = new Map<string, { cert: string; version: number }>();
  let revision = 0;
  let versions = 1;
  const apps = (without: readonly string[]) =>
    [
      { name: "a", hostnames: A_NAMES, tls: "a-tls" },
      { name: "b", hostnames: ["b.example.com"], tls: "b-tls" },
      { name: "c", hostnames: ["c.example.com"] },
    ]
      .filter((app) => !without.includes(app.name))
      .map((app) => ({ ...app, upstream: upstreams.urls[0]! }));
  const secrets = () =>
    secretsOf([
      ...["a", "b", "c"].map((app): [string, ReturnType<typeof secretData>] => [
        `apps/${app}-credentials`,
        secretData({ token: "t" }),
      ]),
      ...[...tlsOf].map(([app, { cert, version }]): [string, ReturnType<typeof secretData>] => [
        `apps/${app}-tls`,
        secretData(tlsSecretData(certs.get(cert)!), `${version}`),
      ]),
    ]);
  const at = (builtAt = Date.now()) => ({ ...meta(++revision, builtAt), serveCertificates: true });
  const world: CertificateWorld = {
    dir,
    proxy,
    target,
    certs,
    names,
    errors,
    tlsOf,
    named(name, hostnames) {
      const cert = makeCertificate({ names: hostnames });
      certs.set(name, cert);
      names.set(fingerprint(cert.crt), name);
    },
    build: (options = {}) =>
      build(registryOf(apps(options.without ?? [])), secrets(), {
        ...at(),
        ...(options.revision === undefined ? {} : { revision: options.revision }),
      }),
    rotated(from, app, cert, builtAt) {
      if (cert === null) tlsOf.delete(app);
      else tlsOf.set(app, { cert, version: ++versions });
      const ref = { namespace: "apps", name: `${app}-tls` };
      return rebuildForSecrets(from, [ref], secrets(), at(builtAt));
    },
    async pushed(view, options) {
      const result = await target.push(view, options);
      if (!result.ok) errors.push(result.error.message);
      expect(result).toEqual(ok(undefined));
    },
    served: (servernames) =>
      Promise.all(servernames.map((n) => handshake(proxy.tlsPort!, n, names))),
    async holds(view) {
      const held = await target.heldDigest();
      return held.ok && held.value === target.digestOf(view);
    },
    pushes: () => relay.requests.filter((r) => r.endsWith(" /replica-mirror/table")),
    close: () => release(relay, proxy, upstreams, dir),
  };
  world.named("a1", A_NAMES);
  world.named("b1", ["b.example.com"]);
  tlsOf.set("a", { cert: "a1", version: 1 });
  tlsOf.set("b", { cert: "b1", version: 1 });
  return world;
}
