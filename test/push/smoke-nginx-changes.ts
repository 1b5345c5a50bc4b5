// A bounded measurement of nginx zero-hop PATCHes as rotations pile up since the whole table, not
// a test: SMOKE_ROTATIONS one-App credential rotations (each a new 40 B value for another App) at
// SMOKE_APPS Apps, each timed as its body is made from the base afresh (every chunk changed since
// the base compared again) and as nginxChanges makes it (the chunks changed since the last push),
// and as `target.push` through the real nginx; p50 per 50 rotations.
// Run: node test/push/smoke-nginx-changes.ts (SMOKE_APPS and SMOKE_ROTATIONS change the defaults
// of 10000 and 400).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quantile } from "../../bench/measure.ts";
import { nginxChanges, nginxChangesBody } from "../../src/push/nginx-changes.ts";
import { nginxBase } from "../../src/push/nginx-table.ts";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { startEchoUpstreams } from "../support/zero-hop.ts";
import { answering, closeAgent, LAUNCHES, spawned } from "./smoke-processes.ts";

const APPS = Number(process.env.SMOKE_APPS ?? 10_000);
const ROTATIONS = Number(process.env.SMOKE_ROTATIONS ?? 400);
const BLOCK = 50;

const [binary, launchOf] = LAUNCHES.nginx!;
const dir = await mkdtemp(join(tmpdir(), "replica-mirror-nginx-changes-"));
const upstreams = await startEchoUpstreams(1);
const launch = await launchOf(binary, dir);
await launch.prepare();
const proxy = spawned("nginx", launch.command, launch.args, { ...launch.env }, launch.port);
await answering(launch.port);
const target = nginxTarget({ socket: launch.sidecarFlags[1]!.replace(/^unix:/, "") });

const apps: AppInput[] = Array.from({ length: APPS }, (_, i) => ({
  name: `app-${i}`,
  hostnames: [`app-${i}.example.com`],
  upstream: upstreams.urls[0]!,
  credential: {},
}));
const tokens = new Map(apps.map((a) => [`${a.name}-credentials`, "t".repeat(40)]));
const secrets = () =>
  secretsOf([...tokens].map(([name, value]) => [`apps/${name}`, secretData({ token: value })]));
const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
let revision = 1;
let snapshot: Snapshot = build(registryOf(apps), secrets(), at(revision));
const whole = await target.push(snapshot);
if (!whole.ok) throw new Error(whole.error.message);
const base = nginxBase(snapshot, "1");
const changes = nginxChanges(base, 2_000);

const times = { afresh: [] as number[], incremental: [] as number[], push: [] as number[] };
for (let r = 0; r < ROTATIONS; r++) {
  const name = `app-${(r * 7919 + 1) % APPS}-credentials`;
  tokens.set(name, `v${r}-`.padEnd(40, "x"));
  snapshot = rebuildForSecrets(snapshot, [{ namespace: "apps", name }], secrets(), at(++revision));
  let t0 = performance.now();
  nginxChangesBody(snapshot, base, 2_000);
  times.afresh.push(performance.now() - t0);
  t0 = performance.now();
  changes(snapshot);
  times.incremental.push(performance.now() - t0);
  t0 = performance.now();
  const pushed = await target.push(snapshot);
  if (!pushed.ok) throw new Error(pushed.error.message);
  times.push.push(performance.now() - t0);
}
const p50 = (xs: number[], from: number) => quantile(xs.slice(from, from + BLOCK), 0.5).toFixed(2);
console.log(`nginx, ${APPS} Apps, ${ROTATIONS} rotations; p50 ms per ${BLOCK}:`);
for (let from = 0; from < ROTATIONS; from += BLOCK) {
  console.log(
    `  rotations ${from + 1}-${from + BLOCK}: body afresh ${p50(times.afresh, from)}, incremental ${p50(times.incremental, from)}; push ${p50(times.push, from)}`,
  );
}
closeAgent();
await proxy.stop();
await upstreams.close();
await rm(dir, { recursive: true, force: true });
