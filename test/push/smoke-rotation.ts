// A smoke-length measurement of a credential rotation in zero-hop mode (not a test): at 10k Apps,
// every App with a credential (`Bearer ` and 40 bytes by default), one App's Secret changed at a
// time, as the mirror rebuilds for it; per rotation, the push itself (the target's `push`), the time until a
// request to that App carries the new value to its upstream, the proxy's CPU (from /proc: 10 ms
// ticks, so 0 is less than one), and what went over the socket (nginx: a PATCH of that App's
// lines, ADR 44; HAProxy: the commands, a `set map` of the App's credential and the revision;
// Caddy: the whole table).
// Run: node test/push/smoke-rotation.ts [haproxy|caddy|nginx]... (SMOKE_APPS, SMOKE_ROTATIONS and
// SMOKE_CREDENTIAL_BYTES change the defaults of 10000, 20 and 40).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quantile } from "../../bench/measure.ts";
import { caddyRoutes } from "../../src/push/caddy-routes.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import { tableOf } from "../../src/push/table.ts";
import type { PushTarget } from "../../src/push/target.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { ask, credentialDigest, startEchoUpstreams } from "../support/zero-hop.ts";
import { startSocketRelay } from "../support/zero-hop-relay.ts";
import { answering, LAUNCHES, quiet, spawned } from "./smoke-processes.ts";

const APPS = Number(process.env.SMOKE_APPS ?? 10_000);
const ROTATIONS = Number(process.env.SMOKE_ROTATIONS ?? 20);
const BYTES = Number(process.env.SMOKE_CREDENTIAL_BYTES ?? 40);

const token = (app: number, version: number) =>
  `${String(version).padStart(4, "0")}-${app}-`.padEnd(BYTES, "k");

/** What one push of `view` sends to Caddy, in bytes: its whole table. */
const caddyBytes = (view: Snapshot): number => JSON.stringify(caddyRoutes(tableOf(view))).length;

/** HAProxy's runtime API commands after the first push, by verb and map, never a value. */
function commandCounts(lines: readonly string[], dir: string): string {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const [verb, object, where, key] = line.split(" ");
    const map = where?.startsWith("@") ? key : where;
    const name = map === undefined ? "" : ` ${map.replace(`${dir}/`, "")}`;
    const what = `${verb} ${object}${name}${key === "REVISION" ? " REVISION" : ""}`;
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  return [...counts].map(([what, n]) => `${what} x${n}`).join(", ");
}

async function measure(proxy: string): Promise<void> {
  const [binary, launchOf] = LAUNCHES[proxy]!;
  const dir = await mkdtemp(join(tmpdir(), `replica-mirror-rotation-${proxy}-`));
  const upstreams = await startEchoUpstreams(1);
  const launch = await launchOf(binary, dir);
  await launch.prepare();
  if (proxy === "haproxy") {
    const { readFile, writeFile } = await import("node:fs/promises");
    const cfg = join(dir, "haproxy.cfg");
    await writeFile(cfg, quiet(await readFile(cfg, "utf8")));
  }
  const process_ = spawned(proxy, launch.command, launch.args, { ...launch.env }, launch.port);
  await answering(launch.port);
  // nginx and HAProxy through a relay of their socket, which records each request or command.
  const relayed = join(dir, "relay.sock");
  const relay = proxy === "caddy" ? null : await startSocketRelay(relayed, launch.socket);
  const targets: Record<string, () => PushTarget> = {
    caddy: () => launch.target,
    nginx: () => nginxTarget({ socket: relayed }),
    haproxy: () =>
      haproxyTarget({
        socket: relayed,
        map: join(dir, "replica-mirror.map"),
        credentialsMap: join(dir, "replica-mirror-credentials.map"),
      }),
  };
  const target = targets[proxy]!();

  const apps: AppInput[] = Array.from({ length: APPS }, (_, i) => ({
    name: `app-${i}`,
    hostnames:
      i % 10 === 0 ? [`app-${i}.example.com`, `*.app-${i}.example.com`] : [`app-${i}.example.com`],
    upstream: upstreams.urls[0]!,
    credential: { prefix: "Bearer " },
  }));
  const tokens = new Map(apps.map((a, i) => [`${a.name}-credentials`, token(i, 0)]));
  const secrets = () =>
    secretsOf([...tokens].map(([name, value]) => [`apps/${name}`, secretData({ token: value })]));
  const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
  let snapshot = build(registryOf(apps), secrets(), at(1));
  const first = await target.push(snapshot);
  if (!first.ok) throw new Error(`${proxy}: ${first.error.message}`);
  const afterFirst = relay?.requests.length ?? 0;

  const pushMs: number[] = [];
  const answeringMs: number[] = [];
  const cpuMs: number[] = [];
  for (let r = 1; r <= ROTATIONS; r++) {
    const app = (r * 7919) % APPS;
    tokens.set(`app-${app}-credentials`, token(app, r));
    const ref = { namespace: "apps", name: `app-${app}-credentials` };
    snapshot = rebuildForSecrets(snapshot, [ref], secrets(), at(r + 1));
    const want = credentialDigest(`Bearer ${token(app, r)}`);
    const cpu0 = process_.cpuMicros();
    const t0 = performance.now();
    const pushed = await target.push(snapshot);
    if (!pushed.ok) throw new Error(`${proxy}: ${pushed.error.message}`);
    pushMs.push(performance.now() - t0);
    for (;;) {
      const got = await ask(launch.port, { host: `app-${app}.example.com` }).catch(() => null);
      if (got?.echoed?.authorization[0] === want) break;
    }
    answeringMs.push(performance.now() - t0);
    cpuMs.push((process_.cpuMicros() - cpu0) / 1000);
  }
  const q = (xs: number[], p: number) => quantile(xs, p).toFixed(1);
  const line = (what: string, xs: number[]) =>
    `  ${what}: p50 ${q(xs, 0.5)} ms, p99 ${q(xs, 0.99)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
  const sent =
    relay === null
      ? `whole table each time, ${(caddyBytes(snapshot) / 1e6).toFixed(2)} MB`
      : proxy === "haproxy"
        ? `after the first push, ${commandCounts(relay.requests.slice(afterFirst), dir)}`
        : relay.requests
            .filter((l) => l.endsWith(" /replica-mirror/table"))
            .join(", ")
            .replace(/ \/replica-mirror\/table/g, "");
  console.log(
    `${proxy}: ${ROTATIONS} rotations at ${APPS} Apps, each with a credential of ${BYTES} B; sent: ${sent}`,
  );
  console.log(line("push", pushMs));
  console.log(line("rotation → the upstream gets the new value", answeringMs));
  console.log(line("proxy CPU per rotation", cpuMs));
  await relay?.close();
  await process_.stop();
  await upstreams.close();
  await rm(dir, { recursive: true, force: true });
}

for (const proxy of process.argv.slice(2).length > 0
  ? process.argv.slice(2)
  : ["nginx", "haproxy", "caddy"])
  await measure(proxy);
