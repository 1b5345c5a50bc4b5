// A smoke-length measurement of certificate rotations through Caddy (not a test): SMOKE_APPS Apps
// (default 1 and 1000, one run each), each with its own certificate, pushed; then one App's
// certificate rotated SMOKE_ROTATIONS times (default 120): 20 times alone, then while two loops
// of TLS handshakes run against that App's name; per run, the first push, each rotation's push
// (the target's `push`: a GET of the revision, one PATCH of the certificate's `load_pem` entry
// and one of the routes, each PATCH a reload of Caddy's whole configuration), and the
// handshakes that failed, by error.
// Run: node test/push/smoke-caddy-certificates.ts

import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { quantile } from "../../bench/measure.ts";
import { build } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import type { TestCertificate } from "../support/certificates.ts";
import { findTool } from "../support/tools.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { startZeroHopCaddy } from "../support/zero-hop-proxies.ts";

const RUNS = (process.env.SMOKE_APPS ?? "1,1000").split(",").map(Number);
const ROTATIONS = Number(process.env.SMOKE_ROTATIONS ?? 120);

/** A self-signed certificate for `name`: one openssl process (makeCertificate runs three). */
async function quickCertificate(dir: string, name: string): Promise<TestCertificate> {
  const [crt, key] = [join(dir, "c.pem"), join(dir, "k.pem")];
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"],
      ...["-days", "30", "-subj", `/CN=${name}`, "-addext", `subjectAltName=DNS:${name}`],
      ...["-keyout", key, "-out", crt],
    ],
    { stdio: "pipe" },
  );
  return { crt: await readFile(crt, "latin1"), key: await readFile(key, "latin1") };
}

function handshake(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false });
    socket.setTimeout(5_000, () => socket.destroy(new Error("timeout")));
    socket.once("secureConnect", () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? "none";
      socket.destroy();
      resolve(fingerprint);
    });
    socket.once("error", reject);
  });
}

async function run(caddy: string, count: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-caddy-certs-"));
  const proxy = await startZeroHopCaddy(caddy, dir);
  try {
    const name = (i: number) => `app-${String(i).padStart(5, "0")}.example.com`;
    const apps: AppInput[] = Array.from({ length: count }, (_, i) => ({
      name: `app-${String(i).padStart(5, "0")}`,
      hostnames: [name(i)],
      upstream: "http://127.0.0.1:9",
      tls: `app-${String(i).padStart(5, "0")}-tls`,
    }));
    const certificates: TestCertificate[] = [];
    for (let i = 0; i < count; i++) certificates.push(await quickCertificate(dir, name(i)));
    const rotated: TestCertificate[] = [];
    for (let r = 0; r < ROTATIONS; r++) rotated.push(await quickCertificate(dir, name(0)));
    let revision = 0;
    const viewWith = (first: TestCertificate): Snapshot => {
      revision++;
      const secrets = secretsOf(
        apps.flatMap((a, i): [string, ReturnType<typeof secretData>][] => [
          [`apps/${a.name}-credentials`, secretData({ token: "t" })],
          [
            `apps/${a.name}-tls`,
            secretData(
              {
                "tls.crt": (i === 0 ? first : certificates[i]!).crt,
                "tls.key": (i === 0 ? first : certificates[i]!).key,
              },
              i === 0 ? `r${revision}` : "1",
            ),
          ],
        ]),
      );
      return build(registryOf(apps), secrets, {
        ...meta(revision, Date.now()),
        serveCertificates: true,
      });
    };
    const views = [viewWith(certificates[0]!), ...rotated.map((c) => viewWith(c))];
    let started = performance.now();
    const first = await proxy.target.push(views[0]!);
    const firstMs = performance.now() - started;
    if (!first.ok) throw new Error(first.error.message);
    // Idle: the rotations' pushes alone, each its own view, before the loops start.
    const idle: number[] = [];
    for (const view of views.slice(1, 21)) {
      started = performance.now();
      const pushed = await proxy.target.push(view);
      idle.push(performance.now() - started);
      if (!pushed.ok) throw new Error(pushed.error.message);
    }
    const known = new Set(
      [certificates[0]!, ...rotated].map((c) => new X509Certificate(c.crt).fingerprint256),
    );
    let done = false;
    const counts = { handshakes: 0, wrong: 0 };
    const failures = new Map<string, number>();
    const loop = async () => {
      while (!done) {
        counts.handshakes++;
        try {
          if (!known.has(await handshake(proxy.tlsPort!, name(0)))) counts.wrong++;
        } catch (e) {
          const what = (e as Error).message.replace(/ 127\.0\.0\.1:\d+/, "");
          failures.set(what, (failures.get(what) ?? 0) + 1);
        }
      }
    };
    const loops = [loop(), loop()];
    const pushes: number[] = [];
    for (const view of views.slice(21)) {
      started = performance.now();
      const pushed = await proxy.target.push(view);
      pushes.push(performance.now() - started);
      if (!pushed.ok) throw new Error(pushed.error.message);
    }
    done = true;
    await Promise.all(loops);
    const failed = [...failures.values()].reduce((a, b) => a + b, 0);
    console.log(
      `${count} certificates: first push ${firstMs.toFixed(1)} ms; 20 rotations idle: push p50 ` +
        `${quantile(idle, 0.5).toFixed(1)} ms, max ${Math.max(...idle).toFixed(1)} ms; ` +
        `${ROTATIONS - 20} rotations under handshakes: push p50 ` +
        `${quantile(pushes, 0.5).toFixed(1)} ms, p99 ${quantile(pushes, 0.99).toFixed(1)} ms, max ` +
        `${Math.max(...pushes).toFixed(1)} ms; ${counts.handshakes} handshakes, ${failed} failed ` +
        `${JSON.stringify(Object.fromEntries(failures))}, ${counts.wrong} with another certificate`,
    );
  } finally {
    await proxy.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const caddy = findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]);
if (caddy.path === undefined) throw new Error("no caddy");
for (const count of RUNS) await run(caddy.path, count);
