// The data-plane charts of BENCHMARKS.md, rendered with Vega-Lite from the suite's own saved JSON
// (bench/results/dataplanes.json; the quick run's only when there is no full one). Run on its
// own (`node bench/dataplanes/charts.ts`) or at the end of `npm run bench:dataplanes`.

import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TopLevelSpec } from "vega-lite";
import { renderChart } from "../chart.ts";
import { fmt } from "../measure.ts";
import { loadResult, type SuiteResult } from "../results.ts";
import { nameOf, PROXIES } from "./proxies.ts";
import { comparisons } from "./report.ts";
import type { DataplanesData } from "./suite.ts";

const OUT = fileURLToPath(new URL("../../docs/charts/", import.meta.url));
const ALONE = "the proxy alone";
const HOP = "shipped config + sidecar (hop)";
const PARTS = ["the proxy alone", "the proxy, in hop mode", "the sidecar, in hop mode"] as const;
const ORDER = PROXIES.map((p) => p.name);

/** Renders the charts from the saved result; returns the files written under docs/charts/. */
export async function renderDataplaneCharts(
  result: SuiteResult<DataplanesData>,
): Promise<string[]> {
  mkdirSync(OUT, { recursive: true });
  const source = `${result.quick ? "quick" : "full"} run ${result.at.slice(0, 16)}Z, load ${fmt(result.load.min, 1)}–${fmt(result.load.max, 1)}`;
  const rows = comparisons(result.data);
  const apps = (n: number) => `${n / 1000}k Apps`;
  const throughput = rows.flatMap((c) => [
    { proxy: nameOf(c.kind), apps: apps(c.apps), variant: ALONE, rps: c.aloneRps, label: "" },
    {
      proxy: nameOf(c.kind),
      apps: apps(c.apps),
      variant: HOP,
      rps: c.hopRps,
      label: `${fmt(c.rpsRatio, 2)}x`,
    },
  ]);
  const cpu = rows.flatMap((c) => [
    { proxy: nameOf(c.kind), apps: apps(c.apps), variant: ALONE, part: PARTS[0], us: c.aloneCpuUs },
    {
      proxy: nameOf(c.kind),
      apps: apps(c.apps),
      variant: HOP,
      part: PARTS[1],
      us: c.hopProxyCpuUs,
    },
    {
      proxy: nameOf(c.kind),
      apps: apps(c.apps),
      variant: HOP,
      part: PARTS[2],
      us: c.hopSidecarCpuUs,
    },
  ]);
  // Panels in the order of the sizes, smallest first.
  const sizes = [...new Set(rows.map((c) => c.apps))].sort((a, b) => a - b).map(apps);
  const mechanisms = PROXIES.map((p) => p.label).join(", ");
  const files = ["dataplanes-throughput.svg", "dataplanes-cpu.svg"];
  await renderChart(
    throughputChart(
      [
        `req/s through each proxy (${mechanisms})`,
        `wrk, ${result.data.connections} connections, random hosts; ${source}`,
      ],
      sizes,
      throughput,
    ),
    `${OUT}${files[0]}`,
  );
  await renderChart(
    cpuChart(
      [
        "CPU per request: the proxy alone; the proxy and the sidecar in hop mode",
        `same runs; ${source}`,
      ],
      sizes,
      cpu,
    ),
    `${OUT}${files[1]}`,
  );
  return files;
}

const SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";
const proxyAxis = {
  field: "proxy",
  type: "nominal",
  title: null,
  sort: ORDER,
  axis: { labelAngle: 0 },
} as const;
const variantColor = {
  field: "variant",
  type: "nominal",
  title: null,
  legend: { orient: "bottom", labelLimit: 0 },
} as const;

/** Grouped bars: each proxy alone and in hop mode, the ratio over the hop bar; a panel per size. */
function throughputChart(
  title: string[],
  sizes: string[],
  values: Record<string, unknown>[],
): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title,
    data: { values },
    facet: { column: { field: "apps", type: "nominal", title: null, sort: sizes } },
    spec: {
      width: 300,
      height: 260,
      encoding: {
        x: proxyAxis,
        xOffset: { field: "variant", sort: [ALONE, HOP] },
        y: { field: "rps", type: "quantitative", title: "req/s (median of rounds)" },
      },
      layer: [
        { mark: "bar", encoding: { color: { ...variantColor, sort: [ALONE, HOP] } } },
        {
          mark: { type: "text", dy: -6, fontSize: 11 },
          encoding: { text: { field: "label", type: "nominal" } },
        },
      ],
    },
  };
}

/** Stacked bars: the proxy's CPU per request alone, and the proxy's plus the sidecar's in hop. */
function cpuChart(
  title: string[],
  sizes: string[],
  values: Record<string, unknown>[],
): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title,
    data: { values },
    facet: { column: { field: "apps", type: "nominal", title: null, sort: sizes } },
    spec: {
      width: 300,
      height: 260,
      mark: "bar",
      encoding: {
        x: proxyAxis,
        xOffset: { field: "variant", sort: [ALONE, HOP] },
        y: { field: "us", type: "quantitative", title: "µs of CPU per request", stack: "zero" },
        color: {
          field: "part",
          type: "nominal",
          title: null,
          sort: [...PARTS],
          scale: { domain: [...PARTS], range: ["#9ecae9", "#4c78a8", "#f58518"] },
          legend: { orient: "bottom", labelLimit: 0 },
        },
        order: { field: "part", sort: "ascending" },
      },
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result =
    loadResult<DataplanesData>("dataplanes") ?? loadResult<DataplanesData>("dataplanes", true);
  if (result === null) console.log("no dataplanes results to chart");
  else console.log(`docs/charts/: ${(await renderDataplaneCharts(result)).join(", ")}`);
}
