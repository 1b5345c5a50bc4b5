// A bounded measurement of HAProxy's routing map changed through its overlay (ADR 60), not a
// test: at each size (a wildcard on every tenth App, as bench/fixtures.ts builds them), CHANGES
// one-App Secret changes that flip the App between ready and secret-unavailable, each timed from
// `target.push(view)` to the first answer from the new entry, by a target that sends every
// change whole (`maxOverlayApps: 0`: a new version of the routing map) and then by one that sends
// every change into the overlay; then K Apps changed at once, each way, for the bound on the
// overlay (MAX_OVERLAY_APPS).
// Run: node test/push/smoke-delta.ts (SMOKE_SIZES, SMOKE_CHANGES and SMOKE_BATCHES change the
// defaults of 10000,100000, 30 and 16,64,256).

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quantile } from "../../bench/measure.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { startEchoUpstreams } from "../support/zero-hop.ts";
import { answering, closeAgent, LAUNCHES, quiet, spawned, status } from "./smoke-processes.ts";

const SIZES = (process.env.SMOKE_SIZES ?? "10000,100000").split(",").map(Number);
const CHANGES = Number(process.env.SMOKE_CHANGES ?? 30);
const BATCHES = (process.env.SMOKE_BATCHES ?? "16,64,256").split(",").map(Number);
const BATCH_REPEATS = 5;

const summary = (xs: number[]) =>
  `p50 ${quantile(xs, 0.5).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;

async function measure(size: number): Promise<void> {
  const [binary, launchOf] = LAUNCHES.haproxy!;
  const dir = await mkdtemp(join(tmpdir(), "replica-mirror-delta-"));
  const upstreams = await startEchoUpstreams(1);
  const launch = await launchOf(binary, dir);
  await launch.prepare();
  const cfg = join(dir, "haproxy.cfg");
  await writeFile(cfg, quiet(await readFile(cfg, "utf8")));
  const proxy = spawned("haproxy", launch.command, launch.args, { ...launch.env }, launch.port);
  await answering(launch.port);
  // Every change whole; and every change into the overlay, however many Apps (the bound is what
  // this measures).
  const targets = {
    whole: haproxyTarget({
      socket: launch.socket,
      map: join(dir, "replica-mirror.map"),
      credentialsMap: join(dir, "replica-mirror-credentials.map"),
      maxOverlayApps: 0,
    }),
    entries: haproxyTarget({
      socket: launch.socket,
      map: join(dir, "replica-mirror.map"),
      credentialsMap: join(dir, "replica-mirror-credentials.map"),
      maxOverlayApps: Number.POSITIVE_INFINITY,
    }),
  };
  type Way = keyof typeof targets;

  const apps: AppInput[] = Array.from({ length: size }, (_, i) => ({
    name: `app-${i}`,
    hostnames:
      i % 10 === 0 ? [`app-${i}.example.com`, `*.app-${i}.example.com`] : [`app-${i}.example.com`],
    upstream: upstreams.urls[0]!,
  }));
  const tokens = new Map(apps.map((a) => [`${a.name}-credentials`, "t"]));
  const secrets = () =>
    secretsOf([...tokens].map(([name, value]) => [`apps/${name}`, secretData({ token: value })]));
  let revision = 1;
  let snapshot: Snapshot = build(registryOf(apps), secrets(), meta(revision));
  /** Pushes the current Snapshot with `way`'s target, untimed: it then holds what HAProxy does. */
  const settle = async (way: Way) => {
    const pushed = await targets[way].push(snapshot);
    if (!pushed.ok) throw new Error(pushed.error.message);
  };

  /** Flips `indexes`' Apps between ready and not: the next Snapshot, and the status to expect. */
  const flipped = (indexes: readonly number[]) => {
    const refs = indexes.map((i) => {
      const name = `app-${i}-credentials`;
      tokens.set(name, tokens.get(name) === "t" ? "" : "t");
      return { namespace: "apps", name };
    });
    snapshot = rebuildForSecrets(snapshot, refs, secrets(), meta(++revision));
    return tokens.get(`app-${indexes[0]}-credentials`) === "t" ? 200 : 503;
  };
  /** Pushes the changed Snapshot: ms until the push returned and until the first App answers from it. */
  async function timed(indexes: readonly number[], way: Way) {
    const want = flipped(indexes);
    const host = `app-${indexes[0]}.example.com`;
    const t0 = performance.now();
    const pushed = await targets[way].push(snapshot);
    if (!pushed.ok) throw new Error(pushed.error.message);
    const pushMs = performance.now() - t0;
    while ((await status(launch.port, host)) !== want);
    return { pushMs, answerMs: performance.now() - t0 };
  }

  const answer = { whole: [] as number[], entries: [] as number[] };
  const push = { whole: [] as number[], entries: [] as number[] };
  for (const way of ["whole", "entries"] as const) {
    await settle(way);
    for (let r = 0; r < CHANGES; r++) {
      const t = await timed([(r * 7919 + 1) % size], way);
      answer[way].push(t.answerMs);
      push[way].push(t.pushMs);
    }
  }
  console.log(`haproxy, ${size} Apps, ${CHANGES} one-App changes each way:`);
  for (const way of ["whole", "entries"] as const)
    console.log(`  ${way}: push ${summary(push[way])}; to the answer ${summary(answer[way])}`);

  for (const k of BATCHES) {
    const times = { whole: [] as number[], entries: [] as number[] };
    for (const way of ["whole", "entries"] as const) {
      await settle(way);
      for (let r = 0; r < BATCH_REPEATS; r++) {
        // k Apps none of which has a wildcard: k entries.
        const indexes = Array.from({ length: k }, (_, i) => ((r * k + i) * 10 + 3) % size);
        times[way].push((await timed(indexes, way)).pushMs);
      }
    }
    console.log(
      `  ${k} entries changed at once, push: as entries ${summary(times.entries)}; whole ${summary(times.whole)}`,
    );
  }
  closeAgent();
  await proxy.stop();
  await upstreams.close();
  await rm(dir, { recursive: true, force: true });
}

for (const size of SIZES) await measure(size);
