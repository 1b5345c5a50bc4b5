// A manual measurement of nginx's certificates (not a test; the bench's is `npm run
// bench:dataplanes`): `node test/push/nginx-certificates-smoke.ts [certificates]` starts the real
// nginx with the shipped zero-hop nginx.conf, pushes `certificates` Apps each with its own
// certificate (default 1,000; openssl makes them, about 15 ms each), then rotates one App's
// certificate ROTATIONS times and prints the push's time (a PATCH of one line) and the time until
// a new handshake gets the new certificate, p50 and max; then handshakes per second for 3 s over
// the Apps' names, pushed, and the same nginx loading the same certificates from files.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { certificateEntries } from "../../src/push/certificates.ts";
import { nginxChangesBody } from "../../src/push/nginx-changes.ts";
import { nginxBase } from "../../src/push/nginx-table.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { fingerprintOf as fingerprint } from "../support/tls-client.ts";
import { findTool } from "../support/tools.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { startZeroHopNginx, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { handshake } from "./nginx-certificates-tls.ts";

const COUNT = Number(process.argv[2] ?? 1_000);
const ROTATIONS = 30;
const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);
if (nginx.path === undefined) throw new Error("nginx is not installed");

const name = (i: number) => `app-${String(i).padStart(4, "0")}`;
const host = (i: number) => `${name(i)}.example.com`;
// SMOKE_SHARED_CERTIFICATE=1: one `*.example.com` certificate in every App's Secret (made in
// 15 ms rather than 15 s; nginx then parses one certificate, not one per App).
const shared =
  process.env.SMOKE_SHARED_CERTIFICATE === "1"
    ? makeCertificate({ names: ["*.example.com"] })
    : null;
const certs: TestCertificate[] = Array.from(
  { length: COUNT },
  (_, i) => shared ?? makeCertificate({ names: [host(i)] }),
);
const renewed = Array.from({ length: ROTATIONS }, () => makeCertificate({ names: [host(0)] }));
const registry = registryOf(
  certs.map((_, i) => ({ name: name(i), hostnames: [host(i)], tls: `${name(i)}-tls` })),
);
const tls = certs.map((c) => tlsSecretData(c));
const secrets = (version: number) =>
  secretsOf(
    tls.map((data, i) => [`apps/${name(i)}-tls`, secretData(data, i === 0 ? `${version}` : "1")]),
  );
let revision = 1;
const at = () => ({ ...meta(revision++, Date.now()), serveCertificates: true });

const quantiles = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${s[Math.floor(s.length / 2)]!.toFixed(2)} ms, max ${s.at(-1)!.toFixed(2)} ms`;
};

/**
 * Handshakes per second for `seconds`, four at a time, over every App's name, after one
 * handshake for each (nginx parses a certificate at its first handshake).
 */
async function handshakesPerSecond(proxy: ZeroHopProxy, seconds: number): Promise<string> {
  for (let n = 0; n < COUNT; n++) await handshake(proxy.tlsPort!, host(n), new Map());
  const until = performance.now() + seconds * 1_000;
  let [done, failed, i] = [0, 0, 0];
  const loop = async () => {
    while (performance.now() < until) {
      const got = await handshake(proxy.tlsPort!, host(i++ % COUNT), new Map());
      if (got === "unnamed") done++;
      else failed++;
    }
  };
  await Promise.all([loop(), loop(), loop(), loop()]);
  return `${Math.round(done / seconds)}/s (${failed} failed)`;
}

const dir = await mkdtemp(join(tmpdir(), "replica-mirror-nginx-certificates-"));
const proxy = await startZeroHopNginx(nginx.path, join(dir, "pushed"), {});
try {
  let view: Snapshot = build(registry, secrets(1), at());
  let started = performance.now();
  const whole = await proxy.target.push(view);
  if (!whole.ok) throw new Error(whole.error.message);
  console.log(`${COUNT} certificates: whole PUT ${(performance.now() - started).toFixed(1)} ms`);
  const base = nginxBase(view, "0");
  const [bodyMs, pushMs, servedMs] = [[] as number[], [] as number[], [] as number[]];
  for (let r = 0; r < ROTATIONS; r++) {
    tls[0] = tlsSecretData(renewed[r]!);
    const ref = { namespace: "apps", name: `${name(0)}-tls` };
    view = rebuildForSecrets(view, [ref], secrets(r + 2), at());
    const want = new Map([[fingerprint(renewed[r]!.crt), "new"]]);
    started = performance.now();
    const body = nginxChangesBody(view, base, 2_000, 256);
    bodyMs.push(performance.now() - started);
    const pushed = await proxy.target.push(view);
    if (!pushed.ok) throw new Error(pushed.error.message);
    pushMs.push(performance.now() - started);
    if (body === null || body.split("\n").length !== 4) throw new Error("not a one-line PATCH");
    while ((await handshake(proxy.tlsPort!, host(0), want)) !== "new");
    servedMs.push(performance.now() - started);
  }
  console.log(
    `one rotation: its PATCH body ${quantiles(bodyMs)}; push ${quantiles(pushMs)}; served ${quantiles(servedMs)}`,
  );
  console.log(`handshakes, pushed: ${await handshakesPerSecond(proxy, 3)}`);
  await proxy.stop();
  const fromFiles = await startZeroHopNginx(nginx.path, join(dir, "files"), {
    certificatesFrom: { certificates: certificateEntries(view) },
  });
  try {
    const pushed = await fromFiles.target.push(view);
    if (!pushed.ok) throw new Error(pushed.error.message);
    console.log(`handshakes, from files: ${await handshakesPerSecond(fromFiles, 3)}`);
  } finally {
    await fromFiles.stop();
  }
} finally {
  await proxy.stop();
  await rm(dir, { recursive: true, force: true });
}
