// The TLS rotation chart of BENCHMARKS.md, rendered with Vega-Lite from the saved run that holds
// a TLS part (the full run's, else the partial one's): every certificate rotation per proxy, the
// p99 target and a mounted Secret's delay across. `node bench/dataplanes/tls-chart.ts`.

import { fileURLToPath } from "node:url";
import type { PlaneKind } from "../../test/support/data-plane.ts";
import { renderChart } from "../chart.ts";
import { fmt } from "../measure.ts";
import { loadResult, type SuiteResult } from "../results.ts";
import { type ReferenceLine, rotationChart } from "./chart-specs.ts";
import type { DataplanesData } from "./data.ts";
import { nameOf } from "./proxies.ts";
import { TLS_ROTATION_P99_MS } from "./report-tls.ts";
import { summarizeWrites } from "./report-writes.ts";

const OUT = fileURLToPath(new URL("../../docs/charts/", import.meta.url));
const FILE = "dataplanes-tls-rotation.svg";

/** Renders the chart when `result` has a TLS part; returns the file written, or null. */
export async function renderTlsChart(
  result: SuiteResult<DataplanesData>,
  out = OUT,
): Promise<string | null> {
  const tls = result.data.tls;
  if (tls === undefined) return null;
  const source = `${result.quick ? "quick" : "full"} run ${result.at.slice(0, 16)}Z, load ${fmt(result.load.min, 1)}–${fmt(result.load.max, 1)}`;
  const size = `${tls.certificates} certificates at ${tls.apps / 1000}k Apps`;
  const series = (Object.entries(tls.rotations) as [PlaneKind, { samples: readonly number[] }][])
    .filter(([, r]) => r.samples.length > 0)
    .map(([kind, r]) => ({ series: nameOf(kind), samples: r.samples }));
  const lines: ReferenceLine[] = [
    { ms: TLS_ROTATION_P99_MS.haproxy ?? 50, label: "p99 target", kind: "target" },
    {
      ms: 60_000,
      label: "mounted Secret: the kubelet's sync period (1 min), then a reload",
      kind: "anchor",
    },
  ];
  await renderChart(
    rotationChart(
      [
        `An App's renewed certificate: API write → the next handshake gets it, ${size}`,
        `one tick per rotation under a handshake load, p50/p99/max (ms) above; dashed red: the p99 target (HAProxy, nginx)`,
        `dashed grey: a mounted Secret's published delay; ${source}`,
      ],
      series.map((s) => s.series),
      [size],
      series.flatMap((s) => s.samples.map((ms) => ({ series: s.series, size, ms }))),
      series.map((s) => {
        const w = summarizeWrites(s.series, [...s.samples]);
        const label = [w.p50Ms, w.p99Ms, w.maxMs].map((ms) => fmt(ms, 1)).join("/");
        return { series: s.series, size, ms: w.maxMs, label };
      }),
      lines,
      { y: "ms from the write to a handshake getting the new certificate", color: "pushed" },
    ),
    `${out}${FILE}`,
  );
  return FILE;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const full = loadResult<DataplanesData>("dataplanes");
  const partial = loadResult<DataplanesData>("dataplanes-partial");
  const result = full?.data.tls !== undefined ? full : partial;
  const file = result === null ? null : await renderTlsChart(result);
  console.log(file === null ? "no TLS results to chart" : `docs/charts/${file}`);
}
