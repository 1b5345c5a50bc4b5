// The launch the bench compares pushed certificates with (test/support/zero-hop-proxies.ts,
// `certificatesFrom`): the same nginx configuration loading the certificates from files, served
// by SNI through nginx's own server_name, the default certificate otherwise.

import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { certificateEntries } from "../../src/push/certificates.ts";
import { build } from "../../src/snapshot/build.ts";
import { makeCertificate, tlsSecretData } from "../support/certificates.ts";
import { release } from "../support/release.ts";
import { fingerprintOf as fingerprint } from "../support/tls-client.ts";
import { findTool } from "../support/tools.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { startZeroHopNginx, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { handshake } from "./nginx-certificates-tls.ts";

const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);

// Skipped only where nginx is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(nginx.path === undefined)("nginx's certificates loaded from files", () => {
  let dir: string;
  let proxy: ZeroHopProxy;

  afterAll(() => release(proxy, dir));

  it("serves the certificates it is given as files by SNI, for the bench's comparison", async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
    const cert = makeCertificate({ names: ["f.example.com"] });
    const registry = registryOf([{ name: "f", hostnames: ["f.example.com"], tls: "f-tls" }]);
    const view = build(
      registry,
      secretsOf([["apps/f-tls", secretData(tlsSecretData(cert), "1")]]),
      { ...meta(1, Date.now()), serveCertificates: true },
    );
    proxy = await startZeroHopNginx(nginx.path!, dir, {
      certificatesFrom: { certificates: certificateEntries(view) },
    });
    const names = new Map([
      [fingerprint(cert.crt), "f"],
      [
        fingerprint(readFileSync(join(dir, "default-certificate/default.pem"), "latin1")),
        "default",
      ],
    ]);
    expect(
      await Promise.all(
        ["f.example.com", "g.example.com"].map((n) => handshake(proxy.tlsPort!, n, names)),
      ),
    ).toEqual(["f", "default"]);
  });
});
