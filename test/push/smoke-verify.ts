// A smoke-length measurement of what a verification of the proxy's table costs (ADR 51; not a
// test): at 10k Apps (as smoke-bench.ts builds them), each proxy's CPU and this process's CPU per
// `heldDigest()`, averaged over SMOKE_VERIFICATIONS (default 40) calls made one after another,
// and this process's CPU for the digest of the pushed view, computed once per view.
// Run: node test/push/smoke-verify.ts [haproxy|caddy|nginx]... (SMOKE_APPS: default 10000).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { type AppInput, snapshotOf } from "../support/world.ts";
import { answering, LAUNCHES, spawned } from "./smoke-processes.ts";

const APPS = Number(process.env.SMOKE_APPS ?? 10_000);
const VERIFICATIONS = Number(process.env.SMOKE_VERIFICATIONS ?? 40);

/** The bench Registry of `n` Apps with a wildcard on every tenth, each on its own upstream. */
function snapshotFor(n: number): Snapshot {
  const apps: AppInput[] = [];
  const secrets: Record<string, Record<string, string>> = {};
  for (let i = 0; i < n; i++) {
    const name = `app-${i}`;
    const hostnames = [`${name}.example.com`];
    if (i % 10 === 0) hostnames.push(`*.${name}.example.com`);
    apps.push({ name, hostnames, upstream: `http://10.0.${i >> 8}.${i & 255}:8080` });
    secrets[`${name}-credentials`] = { token: "t" };
  }
  return snapshotOf(apps, secrets, 1);
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function measure(proxy: string): Promise<void> {
  const [binary, launchOf] = LAUNCHES[proxy]!;
  const dir = await mkdtemp(join(tmpdir(), `replica-mirror-verify-${proxy}-`));
  const launch = await launchOf(binary, dir);
  await launch.prepare();
  const server = spawned(proxy, launch.command, launch.args, { ...launch.env }, launch.port);
  try {
    await answering(launch.port);
    const view = snapshotFor(APPS);
    const pushed = await launch.target.push(view);
    if (!pushed.ok) throw new Error(`${proxy}: ${pushed.error.message}`);
    let cpu = cpuMs();
    const expected = launch.target.digestOf(view);
    const expectedMs = cpuMs() - cpu;
    const proxyBefore = server.cpuMicros();
    cpu = cpuMs();
    const started = performance.now();
    for (let i = 0; i < VERIFICATIONS; i++) {
      const held = await launch.target.heldDigest();
      if (!held.ok || held.value !== expected) throw new Error(`${proxy}: ${JSON.stringify(held)}`);
    }
    const per = (x: number) => (x / VERIFICATIONS).toFixed(1);
    console.log(
      `${proxy}, ${APPS} Apps: per verification ${per(performance.now() - started)} ms wall, ` +
        `proxy CPU ${per((server.cpuMicros() - proxyBefore) / 1000)} ms, ` +
        `sidecar CPU ${per(cpuMs() - cpu)} ms; digest of the pushed view ${expectedMs.toFixed(0)} ms CPU once`,
    );
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const chosen = process.argv.slice(2);
for (const proxy of chosen.length > 0 ? chosen : Object.keys(LAUNCHES)) await measure(proxy);
