// What each start-up and memory device still pays for: the shipped artifact beside builds and
// starts that each leave one device out, and bare Fastify, in one run on the same cluster (10k
// Apps, 10k 1 KiB Secrets). A device stays only if leaving it out makes start-up, RSS after sync
// or routing throughput 5% worse or more (BENCHMARKS.md, "Devices").

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Plugin } from "esbuild";
import { BUNDLE_PLUGINS, buildArtifact } from "../scripts/build.ts";
import { startBaseline } from "./baselines.ts";
import { sharedCluster } from "./cluster.ts";
import { waitForStatus } from "./http-probe.ts";
import { startLoadGenerator, writeHostsFile } from "./load.ts";
import { fmt, median, type Row } from "./measure.ts";
import { alternate, medianRatio, type RunResult } from "./rounds.ts";
import type { ServerProcess } from "./server-process.ts";
import { ROOT, startSynced } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const APPS = 10_000;
const SETTLE_MS = 2_000;
const SHIPPED = "shipped";
const FASTIFY = "bare fastify";

/** One way of starting the sidecar: the shipped build, or one device left out. */
interface Variant {
  readonly name: string;
  /** What it leaves out, for the table. */
  readonly without: string;
  readonly build?: {
    readonly without?: readonly (keyof typeof BUNDLE_PLUGINS)[];
    /** src/ module → bench/variants/ module that replaces it. */
    readonly replace?: Readonly<Record<string, string>>;
  };
  readonly dropEnv?: readonly string[];
}

const VARIANTS: readonly Variant[] = [
  { name: SHIPPED, without: "nothing" },
  {
    name: "no-tick-record",
    without: "nextTick record (ADR 21)",
    build: { replace: { "src/runtime/tick-record.ts": "bench/variants/no-tick-record.ts" } },
  },
  {
    name: "no-malloc-env",
    without: "MALLOC_*_THRESHOLD_=65536 (ADR 19)",
    dropEnv: ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"],
  },
  {
    name: "no-collection",
    without: "collection after start (ADR 25)",
    build: { replace: { "src/runtime/v8-collection.ts": "bench/variants/no-collection.ts" } },
  },
  {
    name: "status-app-at-start",
    without: "status API built on first use (ADR 43)",
    build: {
      replace: { "src/ops/status-app-loader.ts": "bench/variants/status-app-at-start.ts" },
    },
  },
  ...Object.keys(BUNDLE_PLUGINS).map(
    (plugin): Variant => ({
      name: `no-${plugin}`,
      without: `bundle plugin ${plugin}`,
      build: { without: [plugin as keyof typeof BUNDLE_PLUGINS] },
    }),
  ),
  {
    name: "fastify-route",
    without: "plain node:http data listener (Fastify serves the route instead)",
    build: { replace: { "src/route/route-server.ts": "bench/variants/fastify-route-server.ts" } },
  },
];

/** Replaces modules of src/ with variants from bench/variants/, wherever they are imported. */
function replacing(replace: Readonly<Record<string, string>>): Plugin {
  const byPath = new Map(
    Object.entries(replace).map(([a, b]) => [resolve(ROOT, a), resolve(ROOT, b)]),
  );
  const variants = new Set(byPath.values());
  return {
    name: "bench-variant",
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.pluginData === "resolved" || variants.has(args.importer)) return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: "resolved",
        });
        const variant = byPath.get(resolved.path);
        return variant === undefined ? undefined : { path: variant };
      });
    },
  };
}

interface Built {
  readonly variant: Variant;
  readonly entry: string;
  readonly nodeFlags: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly withoutEnv: readonly string[];
}

/** Builds the variant when it needs its own build. */
async function prepare(variant: Variant, ctx: SuiteContext): Promise<Built> {
  let dist = join(ROOT, "dist");
  if (variant.build !== undefined) {
    dist = mkdtempSync(join(tmpdir(), `replica-mirror-${variant.name}-`));
    await buildArtifact({
      outdir: dist,
      ...(variant.build.without === undefined ? {} : { without: variant.build.without }),
      extraPlugins: variant.build.replace === undefined ? [] : [replacing(variant.build.replace)],
    });
  }
  return {
    variant,
    entry: join(dist, "main.mjs"),
    nodeFlags: ctx.nodeFlags,
    env: ctx.env,
    withoutEnv: variant.dropEnv ?? [],
  };
}

async function startVariant(b: Built, cluster: Awaited<ReturnType<typeof sharedCluster>>) {
  return startSynced(cluster, {
    entry: b.entry,
    nodeFlags: b.nodeFlags,
    env: b.env,
    withoutEnv: b.withoutEnv,
    name: b.variant.name,
  });
}

/**
 * Start-up (spawn to `/readyz` 200) and RSS after sync (`SETTLE_MS` after every App is ready) of
 * each variant and of bare Fastify in rotating rounds, then `/v1/route` throughput of every
 * variant under wrk (32 connections, random hosts), alternating, in processes that live for the
 * whole phase as a sidecar does: ADR 21's cliff strikes a process minutes into its life, if at
 * all, and only a long-lived process shows what the nextTick record prevents.
 */
export async function benchDevices(ctx: SuiteContext): Promise<SuiteOutput> {
  // Start-up varies by ±10% between spawns of one artifact here: 11 rounds, and each ratio is
  // the median of per-round ratios (processes of one round start seconds apart).
  const startRounds = ctx.quick ? 1 : 11;
  const rounds = ctx.quick ? 1 : 5;
  const seconds = ctx.quick ? 1 : 3;
  const cluster = await sharedCluster(APPS);
  const built: Built[] = [];
  for (const v of VARIANTS) built.push(await prepare(v, ctx));
  const startMs = new Map<string, number[]>([
    [FASTIFY, []],
    ...built.map((b) => [b.variant.name, []] as [string, number[]]),
  ]);
  const rss = new Map<string, number[]>([...startMs.keys()].map((k) => [k, []]));
  const subjects = [FASTIFY, ...built.map((b) => b.variant.name)];
  for (let r = 0; r < startRounds; r++) {
    for (let i = 0; i < subjects.length; i++) {
      const which = subjects[(i + r) % subjects.length]!;
      let server: ServerProcess;
      if (which === FASTIFY) {
        server = await startBaseline("fastify", { nodeFlags: ctx.nodeFlags, env: ctx.env });
        await waitForStatus(server.opsPort, "/readyz", 200, 30_000, 1);
        startMs.get(which)!.push(performance.now() - server.spawnedAt);
      } else {
        const started = await startVariant(built.find((b) => b.variant.name === which)!, cluster);
        server = started.server;
        startMs.get(which)!.push(started.readyMs);
      }
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      rss.get(which)!.push(server.rss());
      await server.stop();
    }
  }
  const load = await startLoadGenerator();
  const servers: ServerProcess[] = [];
  let runs: Map<string, RunResult[]>;
  try {
    for (const b of built) servers.push((await startVariant(b, cluster)).server);
    runs = await alternate(servers, {
      load,
      rounds,
      seconds,
      connections: 32,
      hostsFile: writeHostsFile(APPS),
    });
  } finally {
    await load.close();
    await Promise.all(servers.map((s) => s.stop()));
  }
  return {
    rows: rows(built, startMs, rss, runs),
    data: {
      startRounds,
      rounds,
      seconds,
      startMs: Object.fromEntries(startMs),
      rss: Object.fromEntries(rss),
      runs: Object.fromEntries(runs),
    },
  };
}

const MiB = 2 ** 20;

function rows(
  built: readonly Built[],
  startMs: ReadonlyMap<string, number[]>,
  rss: ReadonlyMap<string, number[]>,
  runs: ReadonlyMap<string, RunResult[]>,
): Row[] {
  const med = (m: ReadonlyMap<string, number[]>, k: string) => median(m.get(k)!);
  const perRound = (m: ReadonlyMap<string, number[]>, k: string) =>
    median(m.get(k)!.map((x, i) => x / m.get(SHIPPED)![i]!));
  const out: Row[] = [
    {
      bench: `devices: bare fastify (spawn → /readyz 200; RSS ${SETTLE_MS / 1000} s after)`,
      figure: `${fmt(med(startMs, FASTIFY), 0)} ms, ${fmt(med(rss, FASTIFY) / MiB, 0)} MiB`,
      baseline: "-",
      ratio: `shipped: ${fmt(1 / perRound(startMs, FASTIFY), 2)}x start-up, ${fmt(1 / perRound(rss, FASTIFY), 2)}x RSS`,
      target: "-",
      met: "-",
    },
  ];
  for (const b of built) {
    const name = b.variant.name;
    const start = perRound(startMs, name);
    const mem = perRound(rss, name);
    const rps = medianRatio(runs.get(name)!, runs.get(SHIPPED)!, (r) => r.rps);
    const pays = start >= 1.05 || mem >= 1.05 || rps <= 0.95;
    out.push({
      bench: `devices: ${name} (without ${b.variant.without}), 10k Apps`,
      figure: `${fmt(med(startMs, name), 0)} ms, ${fmt(med(rss, name) / MiB, 0)} MiB, ${fmt(median(runs.get(name)!.map((r) => r.rps)), 0)} req/s`,
      baseline: SHIPPED,
      ratio: `${fmt(start, 2)}x start-up, ${fmt(mem, 2)}x RSS, ${fmt(rps, 2)}x req/s`,
      target: name === SHIPPED ? "-" : "device kept if any is 5% worse",
      met: name === SHIPPED ? "-" : pays ? "pays" : "does not pay",
    });
  }
  return out;
}
