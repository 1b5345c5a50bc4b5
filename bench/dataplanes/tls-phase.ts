// TLS by SNI (ADR 56): each zero-hop proxy serving 1k Apps' certificates pushed by its sidecar,
// against the same proxy loading the same certificates from files (its sidecar pushing the
// routing table only), side by side in alternating rounds of one run: handshakes per second (a
// new connection and handshake per request, SNI names cycled over the certificates) with the
// proxy's CPU per handshake, and requests per second over kept-alive TLS connections. Then, on
// the pushed side under that handshake load, rotations: from just before the API write of an
// App's renewed certificate until a handshake for its name gets it, with every failed handshake
// counted.

import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PushView } from "../../src/snapshot/types.ts";
import type { PlaneKind } from "../../test/support/data-plane.ts";
import { identityOf, servedIdentity } from "../../test/support/tls-client.ts";
import { waitUntil } from "../../test/support/wait.ts";
import type { LoadGenerator } from "../load.ts";
import type { WorldCluster } from "./cluster-process.ts";
import type { HandshakeLoadResult } from "./handshake-load.ts";

import {
  type BenchCertificate,
  benchCertificates,
  tlsSecretOf,
  writeTlsSecrets,
} from "./tls-certificates.ts";
import type { TlsData, TlsRotations, TlsRound } from "./tls-data.ts";
import { TLS_LAUNCHES } from "./tls-launches.ts";
import { startZeroHopPair, type ZeroHopPair } from "./zero-hop.ts";

/** Concurrent handshake loops of the load process. */
const HANDSHAKE_CONNECTIONS = 16;
/** A rotation not served by then failed. */
const ROTATION_TIMEOUT_MS = 10_000;
/** Between the asks of a rotation's handshake for the renewed name. */
const POLL_MS = 2;

export interface TlsPhaseOptions {
  readonly cluster: WorldCluster;
  readonly certificates: readonly BenchCertificate[];
  /** What the sidecar pushes, built here: the files side loads its certificates. */
  readonly view: PushView;
  readonly binaries: Record<PlaneKind, string>;
  readonly dir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly load: LoadGenerator;
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly rotations: number;
  readonly hostsFile: string;
}

/** Both sides of every proxy that serves TLS, rounds alternating; then the rotations. */
export async function benchTls(o: TlsPhaseOptions): Promise<TlsData> {
  const namesFile = join(o.dir, "tls-names.txt");
  await writeFile(namesFile, `${o.certificates.map((c) => sniOf(c.names[0]!)).join("\n")}\n`);
  const runs: Record<string, { pushed: TlsRound[]; files: TlsRound[] }> = {};
  const rotations: Record<string, TlsRotations> = {};
  const unmeasured: Record<string, string> = {};
  for (const [kind, launches] of Object.entries(TLS_LAUNCHES) as [
    PlaneKind,
    NonNullable<(typeof TLS_LAUNCHES)[PlaneKind]>,
  ][]) {
    const dir = join(o.dir, `tls-${kind}`);
    await mkdir(join(dir, "pushed"), { recursive: true });
    await mkdir(join(dir, "files"), { recursive: true });
    let pushed: ZeroHopPair | null = null;
    let fromFiles: ZeroHopPair | null = null;
    try {
      const start = async (side: "pushed" | "files") => {
        const launch =
          side === "pushed"
            ? await launches.pushed(o.binaries[kind], join(dir, side))
            : await launches.files(o.binaries[kind], join(dir, side), o.view);
        return startZeroHopPair(kind, {
          cluster: o.cluster,
          binary: o.binaries[kind],
          dir: join(dir, side),
          env: o.env,
          launch,
          serveCertificates: side === "pushed",
          name: `${kind} TLS, certificates ${side}`,
        });
      };
      pushed = await start("pushed");
      fromFiles = await start("files");
      const pushedPort = tlsPortOf(pushed);
      const filesPort = tlsPortOf(fromFiles);
      // Both serve every certificate before the clock starts: the last one as a witness.
      const last = o.certificates.at(-1)!;
      for (const port of [pushedPort, filesPort])
        await waitUntil(
          async () =>
            (await servedIdentity(port, sniOf(last.names[0]!))).serial ===
            identityOf(last.crt).serial,
          {
            timeoutMs: 60_000,
            intervalMs: 50,
            what: `${kind} to serve the last App's certificate`,
          },
        );
      // Untimed first: each side has parsed every certificate once (nginx's workers keep what
      // they parsed, as HAProxy and Caddy keep what they loaded) before the rounds compare them.
      for (const port of [pushedPort, filesPort]) await handshakeLoad(port, o.seconds, namesFile);
      const sides = { pushed: [] as TlsRound[], files: [] as TlsRound[] };
      for (let round = 0; round < o.rounds; round++) {
        for (const [side, pair, port] of [
          ["pushed", pushed, pushedPort],
          ["files", fromFiles, filesPort],
        ] as const) {
          sides[side].push(await tlsRound(pair, port, namesFile, o));
        }
      }
      runs[kind] = sides;
      rotations[kind] = await rotate(o, pushedPort, namesFile);
    } catch (e) {
      unmeasured[kind] = (e as Error).message.split("\n")[0]!;
    } finally {
      await pushed?.stop();
      await fromFiles?.stop();
    }
  }
  return {
    apps: o.cluster.apps,
    certificates: o.certificates.length,
    rounds: o.rounds,
    seconds: o.seconds,
    handshakeConnections: HANDSHAKE_CONNECTIONS,
    connections: o.connections,
    runs,
    rotations,
    unmeasured,
  };
}

/** One round on one side: a handshake run, then a kept-alive run over TLS. */
async function tlsRound(
  pair: ZeroHopPair,
  port: number,
  namesFile: string,
  o: TlsPhaseOptions,
): Promise<TlsRound> {
  const cpuBefore = pair.proxy.cpuMicros();
  const handshakes = await handshakeLoad(port, o.seconds, namesFile);
  const cpuUs = pair.proxy.cpuMicros() - cpuBefore;
  const kept = await o.load.run({
    port,
    path: "/",
    seconds: o.seconds,
    connections: o.connections,
    hostsFile: o.hostsFile,
    scheme: "https",
  });
  return {
    handshakesPerS: handshakes.handshakes / handshakes.seconds,
    handshakeFailures: handshakes.failed,
    proxyCpuUsPerHandshake: cpuUs / Math.max(1, handshakes.handshakes),
    rps: kept.requests / kept.seconds,
    p50Us: kept.p50Us,
    p99Us: kept.p99Us,
    failures: kept.failures,
  };
}

/** `rotations` renewals of App certificates under a handshake load on `port`. */
async function rotate(o: TlsPhaseOptions, port: number, namesFile: string): Promise<TlsRotations> {
  // Renewals made before the clock starts: openssl is not what a rotation costs.
  const renewed = await benchCertificates(
    Array.from(
      { length: o.rotations },
      (_, i) => o.certificates[(i * 37) % o.certificates.length]!.app,
    ),
  );
  const loadSeconds = Math.ceil((o.rotations * 150) / 1000) + 5;
  const load = handshakeLoad(port, loadSeconds, namesFile);
  const samples: number[] = [];
  let pollFailures = 0;
  await new Promise((r) => setTimeout(r, 1_000));
  for (const cert of renewed) {
    const want = identityOf(cert.crt).serial;
    const name = sniOf(cert.names[0]!);
    const started = await o.cluster.write([tlsSecretOf(cert)]);
    for (;;) {
      const got = await servedIdentity(port, name).catch(() => null);
      if (got === null) pollFailures++;
      else if (got.serial === want) break;
      if (performance.now() - started > ROTATION_TIMEOUT_MS)
        throw new Error(
          `a renewed certificate of app-${cert.app} not served in ${ROTATION_TIMEOUT_MS} ms`,
        );
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    samples.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 100));
  }
  const background = await load;
  // The next proxy starts from the same certificates, which the files side loads.
  const originals = new Set(renewed.map((c) => c.app));
  await writeTlsSecrets(
    o.cluster,
    o.certificates.filter((c) => originals.has(c.app)),
  );
  return {
    samples,
    handshakes: background.handshakes,
    failed: background.failed + pollFailures,
  };
}

/** A handshake load of its own process against `port` for `seconds`. */
function handshakeLoad(
  port: number,
  seconds: number,
  namesFile: string,
): Promise<HandshakeLoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        new URL("./handshake-load.ts", import.meta.url).pathname,
        String(port),
        String(seconds),
        String(HANDSHAKE_CONNECTIONS),
        namesFile,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d: string) => {
      out += d;
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`handshake load exited with ${code}`));
      resolve(JSON.parse(out.trim()) as HandshakeLoadResult);
    });
  });
}

/** A name a client asks for: the exact hostname, or a name under a wildcard. */
const sniOf = (name: string) => (name.startsWith("*.") ? `w.${name.slice(2)}` : name);

function tlsPortOf(pair: ZeroHopPair): number {
  const port = pair.tlsPort;
  if (port === null) throw new Error(`${pair.proxy.name} terminates no TLS`);
  return port;
}
