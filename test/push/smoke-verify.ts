// A smoke-length measurement of what a verification of the proxy's table costs (ADR 51; not a
// test): at 10k Apps (as smoke-bench.ts builds them), each proxy's CPU and this process's CPU per
// `heldDigest()`, averaged over SMOKE_VERIFICATIONS (default 40) calls made one after another,
// and this process's CPU for the digest of the pushed view, computed once per view.
// Run: node test/push/smoke-verify.ts [haproxy|caddy|nginx]... (SMOKE_APPS: default 10000;
// SMOKE_CREDENTIAL_BYTES: every App with a credential of that size, default none; SMOKE_DEEP=1:
// deep verifications, which read every entry, rather than the shallow ones of ADR 70). Meanwhile a
// request at a time to an unknown host, answered by the proxy itself: the p99 and max of their
// times show how long a verification holds the proxy's requests back.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quantile } from "../../bench/measure.ts";
import { build } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { answering, closeAgent, LAUNCHES, spawned, status } from "./smoke-processes.ts";

const APPS = Number(process.env.SMOKE_APPS ?? 10_000);
const VERIFICATIONS = Number(process.env.SMOKE_VERIFICATIONS ?? 40);
const BYTES = Number(process.env.SMOKE_CREDENTIAL_BYTES ?? 0);
const VERIFY = { deep: process.env.SMOKE_DEEP === "1" };

/**
 * The bench Registry of `n` Apps with a wildcard on every tenth, each on its own upstream; with
 * SMOKE_CREDENTIAL_BYTES, each App's credential of that size, served.
 */
function snapshotFor(n: number): Snapshot {
  const apps: AppInput[] = [];
  const tokens: [string, Record<string, string>][] = [];
  for (let i = 0; i < n; i++) {
    const name = `app-${i}`;
    const hostnames = [`${name}.example.com`];
    if (i % 10 === 0) hostnames.push(`*.${name}.example.com`);
    const upstream = `http://10.0.${i >> 8}.${i & 255}:8080`;
    apps.push({
      name,
      hostnames,
      upstream,
      ...(BYTES > 0 ? { credential: { prefix: "Bearer " } } : {}),
    });
    tokens.push([
      `apps/${name}-credentials`,
      { token: BYTES > 0 ? `${i}-`.padEnd(BYTES, "k") : "t" },
    ]);
  }
  const secrets = secretsOf(tokens.map(([key, data]) => [key, secretData(data)]));
  return build(registryOf(apps), secrets, { ...meta(1), serveCredentials: BYTES > 0 });
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
    const expected = launch.target.digestOf(view, VERIFY);
    const expectedMs = cpuMs() - cpu;
    const proxyBefore = server.cpuMicros();
    cpu = cpuMs();
    const started = performance.now();
    let verifying = true;
    const probes: number[] = [];
    const probing = (async () => {
      while (verifying) {
        const at = performance.now();
        await status(launch.port, "unknown.example.org");
        probes.push(performance.now() - at);
      }
    })();
    for (let i = 0; i < VERIFICATIONS; i++) {
      const held = await launch.target.heldDigest(VERIFY);
      if (!held.ok || held.value !== expected) throw new Error(`${proxy}: ${JSON.stringify(held)}`);
    }
    const verified = performance.now();
    verifying = false;
    await probing;
    const per = (x: number) => (x / VERIFICATIONS).toFixed(1);
    console.log(
      `${proxy}, ${APPS} Apps${BYTES > 0 ? `, ${BYTES} B credentials` : ""}: per ${VERIFY.deep ? "deep" : "shallow"} verification ${per(verified - started)} ms wall, ` +
        `proxy CPU ${per((server.cpuMicros() - proxyBefore) / 1000)} ms, ` +
        `sidecar CPU ${per(cpuMs() - cpu)} ms; digest of the pushed view ${expectedMs.toFixed(0)} ms CPU once; ` +
        `requests meanwhile p99 ${quantile(probes, 0.99).toFixed(1)} ms, max ${Math.max(...probes).toFixed(1)} ms (n=${probes.length})`,
    );
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const chosen = process.argv.slice(2);
for (const proxy of chosen.length > 0 ? chosen : Object.keys(LAUNCHES)) await measure(proxy);
closeAgent();
