// A smoke-length measurement of zero-hop mode (not a test; the full bench is bench/'s): at 10k
// Apps (a wildcard on every tenth, as bench/fixtures.ts builds them), each proxy answering from
// its pushed table against the same proxy routing every request straight to the same upstream,
// in alternating rounds (bench/rounds.ts); then the time from publishing a Snapshot to a pusher
// until the proxy answers from it. Run: node test/push/smoke-bench.ts [haproxy|caddy|nginx]...
// (SMOKE_APPS, SMOKE_ROUNDS, SMOKE_SECONDS, SMOKE_PUSHES change the defaults of 10000, 3, 3 and 12).

import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLoadGenerator, writeHostsFile } from "../../bench/load.ts";
import { quantile } from "../../bench/measure.ts";
import { alternate, medianRatio } from "../../bench/rounds.ts";
import { systemClock } from "../../src/clock.ts";
import { startPusher } from "../../src/push/pusher.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { waitUntil } from "../support/wait.ts";
import { type AppInput, snapshotOf } from "../support/world.ts";
import {
  answering,
  baselineOf,
  closeAgent,
  LAUNCHES,
  quiet,
  spawned,
  startUpstream,
  status,
} from "./smoke-processes.ts";

const APPS = Number(process.env.SMOKE_APPS ?? 10_000);
const ROUNDS = Number(process.env.SMOKE_ROUNDS ?? 3);
const SECONDS = Number(process.env.SMOKE_SECONDS ?? 3);
const PUSHES = Number(process.env.SMOKE_PUSHES ?? 12);
/** The bench Registry of `n` Apps, every App ready and routed to `upstream`, plus `extra`. */
function snapshotFor(
  n: number,
  upstream: string,
  revision: number,
  extra: AppInput[] = [],
): Snapshot {
  const apps: AppInput[] = [...extra];
  const secrets: Record<string, Record<string, string>> = {};
  for (const a of extra) secrets[`${a.name}-credentials`] = { token: "t" };
  for (let i = 0; i < n; i++) {
    const name = `app-${i}`;
    const hostnames = [`${name}.example.com`];
    if (i % 10 === 0) hostnames.push(`*.${name}.example.com`);
    apps.push({ name, hostnames, upstream });
    secrets[`${name}-credentials`] = { token: "t" };
  }
  return snapshotOf(apps, secrets, revision);
}

async function measure(proxy: string): Promise<void> {
  const [binary, launchOf] = LAUNCHES[proxy]!;
  const dir = await mkdtemp(join(tmpdir(), `replica-mirror-smoke-${proxy}-`));
  const upstream = await startUpstream(dir);
  const launch = await launchOf(binary, dir);
  await launch.prepare();
  if (proxy === "haproxy") {
    const cfg = join(dir, "haproxy.cfg");
    await writeFile(cfg, quiet(await readFile(cfg, "utf8")));
  }
  const zeroHop = spawned(
    `${proxy} zero-hop`,
    launch.command,
    launch.args,
    { ...launch.env },
    launch.port,
  );
  const base = await baselineOf(proxy, binary, dir, upstream.address);
  const alone = spawned(`${proxy} static route`, base.command, base.args, base.env, base.port);
  await answering(launch.port);
  await answering(base.port);
  const url = `http://${upstream.address}`;
  const t0 = performance.now();
  const first = snapshotFor(APPS, url, 1);
  const built = performance.now();
  const pushed = await launch.target.push(first);
  if (!pushed.ok) throw new Error(`${proxy}: ${pushed.error.message}`);
  console.log(
    `${proxy}: Snapshot of ${APPS} Apps built in ${(built - t0).toFixed(0)} ms, first push ${(performance.now() - built).toFixed(0)} ms`,
  );

  const load = await startLoadGenerator();
  const hostsFile = writeHostsFile(APPS);
  const runs = await alternate([alone, zeroHop], {
    load,
    rounds: ROUNDS,
    seconds: SECONDS,
    connections: 32,
    hostsFile,
  });
  const a = runs.get(alone.name)!;
  const z = runs.get(zeroHop.name)!;
  const rps = (r: readonly { rps: number }[]) => r.map((x) => x.rps.toFixed(0)).join(" ");
  const cpu = (r: readonly { cpuPerRequestUs: number }[]) =>
    r.map((x) => x.cpuPerRequestUs.toFixed(1)).join(" ");
  console.log(
    `${proxy}: ${load.name}, ${ROUNDS} rounds of ${SECONDS} s, 32 connections, random hosts of the ${APPS} Apps`,
  );
  console.log(
    `  static route  req/s ${rps(a)}  CPU µs/req ${cpu(a)}  p50 ${a.map((x) => x.p50Us).join(" ")} µs`,
  );
  console.log(
    `  zero-hop      req/s ${rps(z)}  CPU µs/req ${cpu(z)}  p50 ${z.map((x) => x.p50Us).join(" ")} µs`,
  );
  console.log(
    `  ratio (median of rounds): throughput ${medianRatio(z, a, (r) => r.rps).toFixed(3)}x, CPU per request ${medianRatio(z, a, (r) => r.cpuPerRequestUs).toFixed(3)}x`,
  );
  // The wildcard walk's cost: exact hosts only against wildcard hosts only (one label above a
  // three-label suffix), alternating, on the zero-hop proxy alone.
  const exactFile = join(dir, "exact.txt");
  const wildFile = join(dir, "wild.txt");
  await writeFile(
    exactFile,
    `${Array.from({ length: 2000 }, (_, i) => `app-${(i * 7919) % APPS}.example.com`).join("\n")}\n`,
  );
  await writeFile(
    wildFile,
    `${Array.from({ length: 2000 }, (_, i) => `w${i}.app-${((i * 7919) % (APPS / 10)) * 10}.example.com`).join("\n")}\n`,
  );
  const perRequest = async (file: string): Promise<number> => {
    const cpu0 = zeroHop.cpuMicros();
    const r = await load.run({
      port: launch.port,
      path: "/",
      seconds: SECONDS,
      connections: 32,
      hostsFile: file,
    });
    if (r.failures > 0) throw new Error(`${proxy}: ${r.failures} failures`);
    return (zeroHop.cpuMicros() - cpu0) / r.requests;
  };
  const exact: number[] = [];
  const wild: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    exact.push(await perRequest(exactFile));
    wild.push(await perRequest(wildFile));
  }
  const us = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(" ");
  console.log(
    `  zero-hop CPU µs/req, exact hosts ${us(exact)}; wildcard hosts ${us(wild)}; median ratio ${quantile(
      wild.map((w, i) => w / exact[i]!),
      0.5,
    ).toFixed(3)}x`,
  );
  await load.close();
  await alone.stop();

  // Publish → answering: each Snapshot adds a probe host that only it serves.
  const snapshots = Array.from({ length: PUSHES }, (_, i) =>
    snapshotFor(APPS, url, 2 + i, [
      { name: `probe-${i}`, hostnames: [`probe-${i}.example.com`], upstream: url },
    ]),
  );
  const pusher = startPusher({
    target: launch.target,
    clock: systemClock,
    observer: {
      pushed: () => {},
      failed: (e) => console.log(e),
      lost: () => {},
      drifted: () => {},
      held: () => {},
    },
  });
  const latencies: number[] = [];
  for (const [i, snapshot] of snapshots.entries()) {
    const started = performance.now();
    pusher.publish(snapshot);
    // A reload (Caddy) closes kept-alive connections: a reset is one more try.
    while ((await status(launch.port, `probe-${i}.example.com`).catch(() => 0)) !== 200) {}
    latencies.push(performance.now() - started);
    await waitUntil(() => pusher.held() === snapshot.revision, { timeoutMs: 30_000 });
  }
  await pusher.close();
  const q = (p: number) => quantile(latencies, p).toFixed(0);
  console.log(
    `  publish → answering, ${PUSHES} pushes of ${APPS} Apps: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${Math.max(...latencies).toFixed(0)} ms (${latencies.map((l) => l.toFixed(0)).join(" ")})`,
  );
  await zeroHop.stop();
  await upstream.process.stop();
}

for (const proxy of process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["haproxy", "caddy"])
  await measure(proxy);
closeAgent();
