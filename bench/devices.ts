// What each device is worth where users pay (ADR 59): the shipped artifact beside builds and
// starts that each leave one device out, measured end to end at 10k Apps on one cluster. The
// request path through nginx in hop mode (devices-hop.ts); the start as the image starts it:
// spawn to the first routed `/v1/route` answer, and RSS after sync. A second process of the
// shipped build runs in every round as a control: the spread of its ratios is the noise a
// device's effect must stand above to keep it (BENCHMARKS.md, "devices").

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Plugin } from "esbuild";
import { BUNDLE_PLUGINS, buildArtifact } from "../scripts/build.ts";
import { flag } from "./child.ts";
import { startCluster } from "./cluster.ts";
import { startUpstream } from "./dataplanes/upstream.ts";
import { hopRounds, nginxBinary, type Subject } from "./devices-hop.ts";
import { startRounds } from "./devices-start.ts";
import { fmt, median, quantile, type Row } from "./measure.ts";
import { ROOT } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const APPS = 10_000;
const SHIPPED = "shipped";
const CONTROL = "shipped-again";

/** Where a device could pay: the request path, or the start (time and RSS). */
type Phase = "hop" | "start";

/** One way of starting the sidecar: the shipped build, or one device left out. */
interface Variant {
  readonly name: string;
  /** What it leaves out, for the table. */
  readonly without: string;
  readonly phases: readonly Phase[];
  /** src/ module → bench/variants/ module that replaces it (`from`: only where it imports it). */
  readonly replace?: { readonly module: string; readonly by: string; readonly from?: string };
  /** Bundle plugins left out. */
  readonly build?: readonly (keyof typeof BUNDLE_PLUGINS)[];
  readonly dropEnv?: readonly string[];
  /** The image's V8 flags left out. */
  readonly dropFlags?: readonly string[];
}

const VARIANTS: readonly Variant[] = [
  { name: SHIPPED, without: "nothing", phases: ["hop", "start"] },
  { name: CONTROL, without: "nothing (the control)", phases: ["hop", "start"] },
  {
    name: "no-malloc-env",
    without: "MALLOC_*_THRESHOLD_=65536 (ADR 19)",
    phases: ["start"],
    dropEnv: ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"],
  },
  {
    name: "no-semi-space-flag",
    without: "--max-semi-space-size=4 (ADR 69)",
    phases: ["hop", "start"],
    dropFlags: ["--max-semi-space-size=4"],
  },
  {
    name: "no-collection",
    without: "the collections after start (ADR 25), both threads",
    phases: ["start"],
    replace: {
      module: "src/runtime/start-up-collection.ts",
      by: "bench/variants/no-collection.ts",
    },
  },
  {
    name: "no-thread-collection",
    without: "the data thread's collection after start",
    phases: ["start"],
    replace: {
      module: "src/runtime/start-up-collection.ts",
      by: "bench/variants/no-collection.ts",
      from: "src/route/worker.ts",
    },
  },
  ...Object.keys(BUNDLE_PLUGINS).map(
    (plugin): Variant => ({
      name: `without-${plugin}`,
      without: `the bundle plugin ${plugin} (ADRs 14, 42)`,
      phases: ["start"],
      build: [plugin as keyof typeof BUNDLE_PLUGINS],
    }),
  ),
  {
    name: "no-bundle-plugins",
    without: "both bundle plugins",
    phases: ["start"],
    build: Object.keys(BUNDLE_PLUGINS) as (keyof typeof BUNDLE_PLUGINS)[],
  },
  {
    name: "fastify-route",
    without: "node:http serving the route (ADR 41; Fastify instead)",
    phases: ["hop"],
    replace: { module: "src/route/route-server.ts", by: "bench/variants/fastify-route-server.ts" },
  },
];

/** Replaces `r.module` with `r.by` wherever it is imported (or only from `r.from`). */
function replacing(r: NonNullable<Variant["replace"]>): Plugin {
  const [module, by] = [resolve(ROOT, r.module), resolve(ROOT, r.by)];
  const from = r.from === undefined ? undefined : resolve(ROOT, r.from);
  return {
    name: "bench-variant",
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.pluginData === "resolved" || args.importer === by) return undefined;
        if (from !== undefined && args.importer !== from) return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: "resolved",
        });
        return resolved.path === module ? { path: by } : undefined;
      });
    },
  };
}

/** The subject that starts `variant`, built into a directory of its own when it needs one. */
async function prepare(variant: Variant, ctx: SuiteContext): Promise<Subject> {
  let dist = join(ROOT, "dist");
  if (variant.replace !== undefined || variant.build !== undefined) {
    dist = mkdtempSync(join(tmpdir(), `replica-mirror-${variant.name}-`));
    await buildArtifact({
      outdir: dist,
      without: variant.build ?? [],
      extraPlugins: variant.replace === undefined ? [] : [replacing(variant.replace)],
    });
  }
  return {
    name: variant.name,
    entry: join(dist, "main.mjs"),
    env: ctx.env,
    withoutEnv: variant.dropEnv ?? [],
    nodeFlags: ctx.nodeFlags.filter((f) => !(variant.dropFlags ?? []).includes(f)),
  };
}

/**
 * Every variant of `--devices=a,b` (default: all) beside the shipped build and the control: hop
 * rounds (`--rounds`, default 11) for those that could pay on the request path, then start
 * rounds (`--start-rounds`, default 7).
 */
export async function benchDevices(ctx: SuiteContext): Promise<SuiteOutput> {
  const rounds = ctx.quick ? 1 : Number(flag("rounds") ?? 11);
  const startRoundsN = ctx.quick ? 1 : Number(flag("start-rounds") ?? 7);
  const seconds = ctx.quick ? 1 : 3;
  const picked = flag("devices")?.split(",");
  const variants = VARIANTS.filter(
    (v) => v.name === SHIPPED || v.name === CONTROL || (picked?.includes(v.name) ?? true),
  );
  const dir = mkdtempSync(join(tmpdir(), "replica-mirror-devices-"));
  const upstream = await startUpstream(nginxBinary(), dir);
  const cluster = await startCluster(APPS, 1024, { upstream: upstream.url });
  try {
    const subjects = new Map<string, Subject>();
    for (const v of variants) subjects.set(v.name, await prepare(v, ctx));
    const of = (phase: Phase) =>
      variants.filter((v) => v.phases.includes(phase)).map((v) => subjects.get(v.name)!);
    const hopSubjects = of("hop");
    const hop =
      hopSubjects.length > 2
        ? await hopRounds(hopSubjects, cluster, { rounds, seconds, connections: 32 })
        : { runs: new Map(), split: new Map() };
    const starts = await startRounds(of("start"), cluster, startRoundsN);
    const per = <T>(m: ReadonlyMap<string, readonly T[]>, f: (x: T) => number) =>
      new Map([...m].map(([k, xs]) => [k, xs.map(f)]));
    const figures: Figure[] = [
      { what: "req/s", values: per(hop.runs, (r) => r.rps), worse: -1, unit: (x) => fmt(x, 0) },
      {
        what: "CPU/request",
        values: per(hop.runs, (r) => r.cpuPerRequestUs),
        worse: 1,
        unit: (x) => `${fmt(x, 0)} µs`,
      },
      { what: "start", values: per(starts, (s) => s.routedMs), worse: 1, unit: ms },
      { what: "start CPU", values: per(starts, (s) => s.cpuMs), worse: 1, unit: ms },
      {
        what: "RSS",
        values: per(starts, (s) => s.rss),
        worse: 1,
        unit: (x) => `${fmt(x / MiB, 0)} MiB`,
      },
    ];
    return {
      rows: rows(variants, figures),
      data: {
        apps: APPS,
        rounds,
        seconds,
        startRounds: startRoundsN,
        hop: Object.fromEntries(hop.runs),
        hopSplit: Object.fromEntries(hop.split),
        starts: Object.fromEntries(starts),
      },
    };
  } finally {
    await cluster.close();
    await upstream.stop();
  }
}

/** One end-to-end figure per subject and round; `worse`: 1 if a higher one is worse, else -1. */
interface Figure {
  readonly what: string;
  readonly values: ReadonlyMap<string, number[]>;
  readonly worse: 1 | -1;
  readonly unit: (x: number) => string;
}

const MiB = 2 ** 20;
const ms = (x: number) => `${fmt(x, 0)} ms`;

/** Per round, a subject's figure over the shipped one's in the same round. */
const ratios = (f: Figure, k: string): number[] =>
  f.values.get(k)!.map((x, i) => x / f.values.get(SHIPPED)![i]!);

/** "0.98x (0.91–1.04)": the median of per-round ratios, and their spread. */
function spread(f: Figure, k: string): string {
  const r = ratios(f, k);
  return `${fmt(median(r), 2)}x (${fmt(Math.min(...r), 2)}–${fmt(Math.max(...r), 2)})`;
}

/**
 * Whether leaving the device out makes `f` worse beyond the noise: its median ratio is worse
 * than the control's ratio in 9 rounds of 10 (one stray round of the control does not decide).
 */
function beyondNoise(f: Figure, k: string): boolean {
  const control = ratios(f, CONTROL).map((r) => r * f.worse);
  return median(ratios(f, k)) * f.worse > quantile(control, 0.9);
}

function rows(variants: readonly Variant[], figures: readonly Figure[]): Row[] {
  return variants.map((v) => {
    const k = v.name;
    const measured = figures.filter((f) => f.values.has(k));
    const device = k !== SHIPPED && k !== CONTROL;
    const pays = measured.some((f) => beyondNoise(f, k));
    return {
      bench: `devices: ${k} (without ${v.without}), 10k Apps`,
      figure: measured.map((f) => `${f.what} ${f.unit(median(f.values.get(k)!))}`).join(", "),
      baseline: SHIPPED,
      ratio: measured.map((f) => `${f.what} ${spread(f, k)}`).join(", "),
      target: device ? "kept if worse than the control in 9 rounds of 10" : "-",
      met: device ? (pays ? "pays" : "does not pay") : "-",
    };
  });
}
