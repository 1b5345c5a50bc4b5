import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "../test/support/wait.ts";
import { type BenchCluster, sharedCluster } from "./cluster.ts";
import { waitForStatus } from "./http-probe.ts";
import { fmt, median, type Row } from "./measure.ts";
import type { ServerProcess } from "./server-process.ts";
import { startShipped } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";
import {
  clientKubeconfig,
  opsMetric,
  type PrimedState,
  primeStateFile,
  requestsBy,
  stateFlags,
  unreachableKubeconfig,
  writeStateKey,
} from "./warm-start-files.ts";

/** The Registry's last App: served only once the whole Registry is. */
const knownHost = (apps: number) => `app-${apps - 1}.example.com`;
const KINDS = ["cold", "warm", "warm-api-down"] as const;
type Kind = (typeof KINDS)[number];
const MiB = 2 ** 20;
/**
 * The watches a warm start resumes: the Registry's and the App Secrets' (cluster-wide). Not the
 * priming run's count, which at 100k Apps on a busy machine was 3 (a watch reopened).
 */
const WATCHES = 2;
/** After the watches are open, how long a relist (a resume refused with 410) is given to show. */
const SETTLE_MS = 1_000;

/** One start, from its spawn. */
export interface StartFigures {
  /** To the first 200 from `/v1/route` for the last App's host on the data port, ms. */
  readonly routedMs: number;
  /** To the first `/readyz` 200 on the ops port, ms. */
  readonly readyMs: number;
  readonly rssAtRouted: number;
  readonly rssAtReady: number;
  /** `replica_mirror_state_loads_total`'s outcome: `loaded` for a warm start, `missing` cold. */
  readonly stateLoad: string;
  /** With the API server up: lists and watches it made until SETTLE_MS after its watches opened. */
  readonly lists?: number;
  readonly watches?: number;
}

interface Setup {
  readonly apps: number;
  readonly cluster: BenchCluster;
  readonly dir: string;
  readonly keyPath: string;
  readonly primed: PrimedState;
  readonly unreachable: string;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Spawn to first routed request and to `/readyz` 200 of the shipped process at 10k Apps (and
 * 100k in a full run, or the `--apps` given): cold (a state file path with no file), warm (the
 * primed state file, copied fresh for each start) and warm with the API server unreachable,
 * rotating over rounds; and the lists a warm start makes while the API server still holds its
 * watches' resourceVersions (none expected).
 */
export async function benchWarmStart(ctx: SuiteContext): Promise<SuiteOutput> {
  const rounds = ctx.quick ? 2 : 5;
  const sizes = ctx.apps ?? (ctx.quick ? [10_000] : [10_000, 100_000]);
  const rows: Row[] = [];
  const bySize: Record<number, unknown> = {};
  for (const apps of sizes) {
    const out = await atSize(apps, rounds, ctx);
    rows.push(...out.rows);
    bySize[apps] = out.data;
  }
  return { rows, data: { bySize } };
}

async function atSize(apps: number, rounds: number, ctx: SuiteContext): Promise<SuiteOutput> {
  const cluster = await sharedCluster(apps);
  const dir = mkdtempSync(join(tmpdir(), "replica-mirror-bench-warm-"));
  try {
    const keyPath = writeStateKey(dir);
    const primed = await primeStateFile(cluster, { dir, keyPath, env: ctx.env });
    const unreachable = await unreachableKubeconfig(dir);
    const setup: Setup = { apps, cluster, dir, keyPath, primed, unreachable, env: ctx.env };
    const starts = new Map<Kind, StartFigures[]>(KINDS.map((k) => [k, []]));
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < KINDS.length; i++) {
        const kind = KINDS[(i + r) % KINDS.length]!;
        starts.get(kind)!.push(await measureStart(kind, r, setup));
      }
    }
    const data = {
      apps,
      host: knownHost(apps),
      rounds,
      // Without its path: the temporary directory is gone once the suite ends.
      primed: { ...primed, path: undefined },
      starts: Object.fromEntries(starts),
    };
    return { rows: rowsOf(apps, starts, rounds, primed), data };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureStart(kind: Kind, round: number, s: Setup): Promise<StartFigures> {
  const client = `warm-start-${kind}-${round}`;
  const statePath = join(s.dir, `${client}.state`);
  if (kind !== "cold") copyFileSync(s.primed.path, statePath);
  const server = await startShipped({
    kubeconfig:
      kind === "warm-api-down" ? s.unreachable : await clientKubeconfig(s.cluster, s.dir, client),
    registryNamespace: s.cluster.registryNamespace,
    env: s.env,
    extraArgs: stateFlags(statePath, s.keyPath),
  });
  try {
    const [routed, ready] = await Promise.all([
      firstOk(server, server.dataPort, "/v1/route", knownHost(s.apps)),
      firstOk(server, server.opsPort, "/readyz"),
    ]);
    const stateLoad = await loadOutcome(server.opsPort);
    if (stateLoad !== (kind === "cold" ? "missing" : "loaded"))
      throw new Error(`${kind} start: state file ${stateLoad}`);
    const figures = {
      routedMs: routed.ms,
      readyMs: ready.ms,
      rssAtRouted: routed.rss,
      rssAtReady: ready.rss,
      stateLoad,
    };
    if (kind === "warm-api-down") return figures;
    await waitUntil(() => requestsBy(s.cluster, client, "watch") >= WATCHES, {
      // At 100k Apps on a busy machine the watches opened 20 s after the spawn.
      timeoutMs: 120_000,
      intervalMs: 5,
      what: `${WATCHES} watches open`,
    });
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return {
      ...figures,
      lists: requestsBy(s.cluster, client, "list"),
      watches: requestsBy(s.cluster, client, "watch"),
    };
  } catch (e) {
    throw new Error(`${String(e)}\n${server.output().slice(-2000)}`);
  } finally {
    await server.stop(10_000);
  }
}

/** Spawn to the first 200 of `path` (polled every millisecond on one kept-alive connection). */
async function firstOk(
  server: ServerProcess,
  port: number,
  path: string,
  host?: string,
): Promise<{ ms: number; rss: number }> {
  await waitForStatus(port, path, 200, 120_000, 1, host);
  const ms = performance.now() - server.spawnedAt;
  return { ms, rss: server.rss() };
}

async function loadOutcome(opsPort: number): Promise<string> {
  for (const outcome of ["loaded", "missing"]) {
    const n = await opsMetric(opsPort, "replica_mirror_state_loads_total", { outcome });
    if ((n ?? 0) > 0) return outcome;
  }
  return "other";
}

function rowsOf(
  apps: number,
  starts: ReadonlyMap<Kind, readonly StartFigures[]>,
  rounds: number,
  primed: PrimedState,
): Row[] {
  const med = (k: Kind, f: (s: StartFigures) => number) => median(starts.get(k)!.map(f));
  const routed = (k: Kind) => starts.get(k)!.map((s) => s.routedMs);
  const summary = (k: Kind) =>
    `${fmt(median(routed(k)), 0)} ms (min ${fmt(Math.min(...routed(k)), 0)}; /readyz ${fmt(
      med(k, (s) => s.readyMs),
      0,
    )} ms; RSS ${fmt(med(k, (s) => s.rssAtRouted) / MiB, 0)} MiB)`;
  // Each round's start against that round's cold start: a neighbour's burst slows a whole round.
  const perRound = (k: Kind) => routed(k).map((ms, r) => ms / routed("cold")[r]!);
  const against = (k: Kind) => ({
    baseline: `cold ${summary("cold")}`,
    ratio: `${fmt(median(perRound(k)), 2)}x cold (median of per-round ratios ${perRound(k)
      .map((x) => fmt(x, 2))
      .join(", ")})`,
    target: "reported",
    met: "-",
  });
  const what = `${apps / 1000}k Apps, ${apps / 1000}k distinct 1 KiB Secrets (median of ${rounds})`;
  const warmLists = starts.get("warm")!.map((s) => s.lists ?? 0);
  const maxLists = Math.max(...warmLists);
  return [
    {
      bench: `spawn → first /v1/route 200, cold start (no state file), ${what}`,
      figure: summary("cold"),
      baseline: "-",
      ratio: "-",
      target: "reported",
      met: "-",
    },
    {
      bench: `spawn → first /v1/route 200, warm start (state file of ${fmt(primed.bytes / MiB, 1)} MiB), ${what}`,
      figure: summary("warm"),
      ...against("warm"),
    },
    {
      bench: `spawn → first /v1/route 200, warm start, API server unreachable, ${what}`,
      figure: summary("warm-api-down"),
      ...against("warm-api-down"),
    },
    {
      bench: `lists made by a warm start within the watch window, ${apps / 1000}k Apps (${warmLists.length} starts, until ${SETTLE_MS / 1000} s after its ${WATCHES} watches opened)`,
      figure: `${maxLists} (most of any start)`,
      baseline: `cold start ${med("cold", (s) => s.lists ?? 0)} lists`,
      ratio: "-",
      target: "0",
      met: maxLists === 0 ? "yes" : "no",
    },
  ];
}
