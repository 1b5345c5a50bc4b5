// `npm run bench:charts`: renders the charts of BENCHMARKS.md into docs/charts/ from the JSON a
// run saved in bench/results/ (the full run's; a quick run's only when there is no full one).

import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BASELINE_LABEL, BASELINES, type BaselineKind } from "./baselines.ts";
import { groupedBarChart, lineChart, renderChart, type Series } from "./chart.ts";
import { median } from "./measure.ts";
import type { MemoryFigures } from "./memory.ts";
import { loadResult, type SuiteResult } from "./results.ts";

const OUT = fileURLToPath(new URL("../docs/charts/", import.meta.url));
const MiB = 2 ** 20;

interface StartupData {
  readonly baselines: Record<BaselineKind, number[]>;
  readonly shipped: Record<string, { readyMs: number[]; rssAtReady: number[] }>;
}

interface MemoryData {
  readonly seconds: number;
  readonly shipped: Record<string, MemoryFigures>;
  readonly baselines: Record<BaselineKind, MemoryFigures>;
}

interface WarmStartSize {
  readonly apps: number;
  readonly starts: Record<string, { routedMs: number; readyMs: number }[]>;
}

/** By size since 100k Apps were added; one size, flat, before. */
type WarmStartData = WarmStartSize | { readonly bySize: Record<string, WarmStartSize> };

interface RouteData {
  readonly runs: Record<string, Record<string, { rps: number; cpuPerRequestUs: number }[]>>;
}

function load<T>(suite: string): SuiteResult<T> | null {
  return loadResult<T>(suite) ?? loadResult<T>(suite, true);
}

/** A baseline as a flat series over the same sizes: it holds no Apps. */
function flat(name: string, sizes: number[], y: number): Series {
  return { name, points: sizes.map((x) => ({ x, y })) };
}

const source = (r: SuiteResult<unknown>) =>
  `${r.quick ? "quick" : "full"} run ${r.at.slice(0, 16)}Z`;

mkdirSync(OUT, { recursive: true });
const written: string[] = [];

/** One chart against the number of Apps (log scale), written to docs/charts/<file>. */
async function byApps(file: string, title: string, y: string, series: Series[]): Promise<void> {
  const x = "Apps (each with a distinct 1 KiB Secret)";
  await renderChart(lineChart({ title, x, y, series, logX: true }), `${OUT}${file}`);
  written.push(file);
}

const startup = load<StartupData>("startup");
if (startup !== null) {
  const sizes = Object.keys(startup.data.shipped).map(Number);
  const series: Series[] = [
    {
      name: "replica-mirror (the bundle, as the image runs it)",
      points: sizes.map((x) => ({ x, y: median(startup.data.shipped[x]!.readyMs) })),
    },
    ...BASELINES.map((b) => flat(BASELINE_LABEL[b], sizes, median(startup.data.baselines[b]))),
  ];
  await byApps("startup.svg", `Spawn to /readyz 200 (median), ${source(startup)}`, "ms", series);
}

const memory = load<MemoryData>("memory");
if (memory !== null) {
  const sizes = Object.keys(memory.data.shipped).map(Number);
  const s = memory.data.shipped;
  const b = memory.data.baselines;
  const after = `after ${memory.data.seconds} s of load`;
  const series: Series[] = [
    {
      name: "replica-mirror after sync",
      points: sizes.map((x) => ({ x, y: s[x]!.idle.rss / MiB })),
    },
    {
      name: `replica-mirror ${after}`,
      points: sizes.map((x) => ({ x, y: s[x]!.loaded.rss / MiB })),
    },
    ...BASELINES.filter((k) => b[k] !== undefined).map((k) =>
      flat(`${BASELINE_LABEL[k]} idle`, sizes, b[k].idle.rss / MiB),
    ),
    flat(`${BASELINE_LABEL.fastify} ${after}`, sizes, b.fastify.loaded.rss / MiB),
  ];
  await byApps("rss.svg", `Resident memory (RSS), ${source(memory)}`, "MiB", series);
}

const route = load<RouteData>("route");
if (route !== null) {
  for (const [key, runs] of Object.entries(route.data.runs)) {
    const connections = key.slice(1);
    const series: Series[] = Object.entries(runs).map(([name, rounds]) => ({
      name,
      points: rounds.map((r, i) => ({ x: i + 1, y: r.cpuPerRequestUs })),
    }));
    const file = `route-cpu-c${connections}.svg`;
    await renderChart(
      lineChart({
        title: `/v1/route, server CPU per request by round, ${connections} connections, ${source(route)}`,
        x: "round (every server once per round, alternating)",
        y: "µs of CPU per request",
        series,
      }),
      `${OUT}${file}`,
    );
    written.push(file);
  }
}

const warmStart = load<WarmStartData>("warm-start");
const warmStartSizes =
  warmStart === null
    ? []
    : "bySize" in warmStart.data
      ? Object.values(warmStart.data.bySize)
      : [warmStart.data];
for (const size of warmStartSizes) {
  const kinds: Record<string, string> = {
    cold: "cold (no state file)",
    warm: "warm (state file)",
    "warm-api-down": "warm, API server unreachable",
  };
  const bars = Object.entries(size.starts).flatMap(([kind, starts]) => [
    {
      group: kinds[kind] ?? kind,
      series: "first /v1/route 200",
      value: median(starts.map((s) => s.routedMs)),
    },
    {
      group: kinds[kind] ?? kind,
      series: "/readyz 200",
      value: median(starts.map((s) => s.readyMs)),
    },
  ]);
  const apps = `${size.apps / 1000}k Apps`;
  const title = `Spawn to first routed request and to /readyz, ${apps} (median), ${source(warmStart!)}`;
  // The 10k chart keeps the name the README links.
  const file = size.apps === 10_000 ? "warm-start.svg" : `warm-start-${size.apps / 1000}k.svg`;
  await renderChart(
    groupedBarChart({ title, x: "start", y: "ms from spawn", bars }),
    `${OUT}${file}`,
  );
  written.push(file);
}

console.log(written.length === 0 ? "no results to chart" : `docs/charts/: ${written.join(", ")}`);
