// The data-plane charts of BENCHMARKS.md, rendered with Vega-Lite from the suite's own saved JSON
// (bench/results/dataplanes.json; the quick run's only when there is no full one). Run on its
// own (`node bench/dataplanes/charts.ts`) or at the end of `npm run bench:dataplanes`. Results
// saved before zero-hop was measured draw without its bars and without the write chart; before
// rotation was, without the rotation chart.

import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderChart } from "../chart.ts";
import { fmt } from "../measure.ts";
import { loadResult, type SuiteResult } from "../results.ts";
import {
  cpuChart,
  PARTS,
  type ReferenceLine,
  rotationChart,
  throughputChart,
  VARIANTS,
  writeChart,
} from "./chart-specs.ts";
import { appsLabel, comparisons } from "./compare.ts";
import { bytesLabel } from "./credentials.ts";
import { type DataplanesData, type RotationData, writesOf } from "./data.ts";
import { labelOf, nameOf, PROXIES, variantName } from "./proxies.ts";
import {
  ROTATION_ANCHORS,
  ROTATION_P99_TARGETS_MS,
  ROTATION_VARIANTS,
  rotationLabel,
} from "./report-rotation.ts";
import { HOP_WRITES, summarizeWrites, WRITE_P99_TARGET_MS } from "./report-writes.ts";

const OUT = fileURLToPath(new URL("../../docs/charts/", import.meta.url));

/** Renders the charts from the saved result; returns the files written under `out`. */
export async function renderDataplaneCharts(
  result: SuiteResult<DataplanesData>,
  out = OUT,
): Promise<string[]> {
  mkdirSync(out, { recursive: true });
  const { data } = result;
  const source = `${result.quick ? "quick" : "full"} run ${result.at.slice(0, 16)}Z, load ${fmt(result.load.min, 1)}–${fmt(result.load.max, 1)}`;
  const hop = comparisons(data, "hop");
  const zeroHop = comparisons(data, "zero-hop");
  const bar = (c: (typeof hop)[number]) => ({ proxy: nameOf(c.kind), apps: appsLabel(c.apps) });
  // The bars of each proxy alone: its hop baseline, and zero-hop's when it is another.
  const baselines = [...hop, ...zeroHop.filter((c) => c.baseline !== "alone")].map((c) => ({
    ...bar(c),
    variant: VARIANTS[c.baseline],
    rps: c.aloneRps,
    us: c.aloneCpuUs,
  }));
  const throughput = [
    ...baselines.map(({ us: _, ...b }) => ({ ...b, label: "" })),
    ...[...hop, ...zeroHop].map((c) => ({
      ...bar(c),
      variant: VARIANTS[c.variant],
      rps: c.rps,
      label: `${fmt(c.rpsRatio, 2)}x`,
    })),
  ];
  const cpu = [
    ...baselines.map(({ rps: _, ...b }) => ({
      ...b,
      part: b.variant === VARIANTS.alone ? PARTS[0] : PARTS[1],
    })),
    ...[...hop, ...zeroHop].flatMap((c) => {
      const [proxy, sidecar] = c.variant === "hop" ? [PARTS[2], PARTS[3]] : [PARTS[4], PARTS[5]];
      const variant = VARIANTS[c.variant];
      return [
        { ...bar(c), variant, part: proxy, us: c.proxyCpuUs },
        { ...bar(c), variant, part: sidecar, us: c.sidecarCpuUs },
      ];
    }),
  ];
  // Panels in the order of the sizes, smallest first.
  const sizes = [...new Set(hop.map((c) => c.apps))].sort((a, b) => a - b).map(appsLabel);
  const mechanisms = [
    `hop: ${PROXIES.map((p) => p.label).join(", ")}`,
    `zero-hop: ${PROXIES.map((p) => p.zeroHopLabel).join(", ")}`,
  ];
  const files = ["dataplanes-throughput.svg", "dataplanes-cpu.svg"];
  await renderChart(
    throughputChart({
      title: [
        "req/s through each proxy: alone, in hop mode, in zero-hop mode",
        ...mechanisms,
        `wrk, ${data.connections} connections, random hosts; ${source}`,
      ],
      sizes,
      values: throughput,
    }),
    `${out}${files[0]}`,
  );
  await renderChart(
    cpuChart({
      title: [
        "CPU per request: the proxy alone; the proxy and its sidecar in hop and in zero-hop mode",
        `same runs; ${source}`,
      ],
      sizes,
      values: cpu,
    }),
    `${out}${files[1]}`,
  );
  const writes = writesOf(data)[0];
  if (writes !== undefined) {
    const series: [string, string][] = [
      ...PROXIES.map((p): [string, string] => [p.zeroHopLabel, variantName(p.kind, "zero-hop")]),
      [`${labelOf(HOP_WRITES)}, hop mode`, variantName(HOP_WRITES, "hop")],
    ];
    const points = series.flatMap(([label, name]) =>
      (writes.samples[name] ?? []).map((ms) => ({ series: label, ms })),
    );
    files.push("dataplanes-write-to-answer.svg");
    await renderChart(
      writeChart(
        [
          `API write → the proxy's new answer, ${writes.apps / 1000}k Apps (zero-hop; nginx hop mode beside)`,
          `${writes.write};`,
          `dashed: the p99 target; ${source}`,
        ],
        series.map(([label]) => label),
        points,
        WRITE_P99_TARGET_MS,
      ),
      `${out}${files[2]}`,
    );
  }
  if (data.rotations !== undefined) files.push(await renderRotations(data.rotations, source, out));
  return files;
}

/** The rotation chart: every rotation per variant and size, the targets and anchors across. */
async function renderRotations(rotations: readonly RotationData[], source: string, out: string) {
  const sizes = rotations.map((r) => `${bytesLabel(r.valueBytes)}`);
  const series = rotations.flatMap((r, i) =>
    ROTATION_VARIANTS.map(([kind, variant]) => ({
      series: rotationLabel(kind, variant),
      size: sizes[i]!,
      samples: r.samples[variantName(kind, variant)] ?? [],
    })),
  );
  const lines: ReferenceLine[] = [
    { ms: ROTATION_P99_TARGETS_MS.hop.nginx!, label: "target, hop: p99", kind: "target" },
    {
      ms: ROTATION_P99_TARGETS_MS["zero-hop"].nginx!,
      label: "target, zero-hop (nginx, HAProxy): p99",
      kind: "target",
    },
    ...ROTATION_ANCHORS.map((a) => ({ ...a, kind: "anchor" as const })),
  ];
  const file = "dataplanes-rotation.svg";
  await renderChart(
    rotationChart(
      [
        `An App's new credential: API write → its upstream got it as Authorization, ${rotations[0]!.apps / 1000}k Apps`,
        `one tick per rotation, p50/p99/max (ms) above; dashed red: the p99 targets (hop ${ROTATION_P99_TARGETS_MS.hop.nginx} ms; zero-hop nginx and HAProxy ${ROTATION_P99_TARGETS_MS["zero-hop"].nginx} ms)`,
        `dashed grey: other ways' published defaults; ${source}`,
      ],
      ROTATION_VARIANTS.map(([kind, variant]) => rotationLabel(kind, variant)),
      sizes,
      series.flatMap((s) => s.samples.map((ms) => ({ series: s.series, size: s.size, ms }))),
      series
        .filter((s) => s.samples.length > 0)
        .map((s) => {
          const w = summarizeWrites(s.series, s.samples);
          const label = [w.p50Ms, w.p99Ms, w.maxMs].map((ms) => fmt(ms, 1)).join("/");
          return { series: s.series, size: s.size, ms: w.maxMs, label };
        }),
      lines,
    ),
    `${out}${file}`,
  );
  return file;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result =
    loadResult<DataplanesData>("dataplanes") ?? loadResult<DataplanesData>("dataplanes", true);
  if (result === null) console.log("no dataplanes results to chart");
  else console.log(`docs/charts/: ${(await renderDataplaneCharts(result)).join(", ")}`);
}
