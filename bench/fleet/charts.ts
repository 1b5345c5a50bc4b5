// The fleet's charts, rendered with Vega-Lite (bench/chart.ts) from the result files: API requests
// per second over each phase by verb, one line style per label asked for, and one
// replica's RSS during its initial list.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TopLevelSpec } from "vega-lite";
import { renderChart } from "../chart.ts";
import { loadResults } from "./report.ts";
import { RESULTS_DIR } from "./results.ts";

const CHARTS = fileURLToPath(new URL("../../docs/charts/", import.meta.url));
const VERBS = ["list", "watch", "get"] as const;

interface Point {
  readonly t: number;
  readonly y: number;
  readonly series: string;
  readonly label: string;
}

/** Line styles by label, in the order of the labels asked for: solid first, then dashed. */
const DASHES = [
  [1, 0],
  [6, 3],
  [2, 2],
];

function spec(
  title: string,
  x: string,
  y: string,
  values: readonly Point[],
  labels: readonly string[],
): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    width: 640,
    height: 260,
    data: { values: [...values] },
    mark: { type: "line", interpolate: "step-after", strokeWidth: 1.5 },
    encoding: {
      x: { field: "t", type: "quantitative", title: x },
      y: { field: "y", type: "quantitative", title: y },
      color: { field: "series", type: "nominal", title: null },
      strokeDash: {
        field: "label",
        type: "nominal",
        title: null,
        scale: { domain: [...labels], range: DASHES.slice(0, labels.length) },
      },
    },
  };
}

/** Renders every chart the results for `labels` allow; returns the files written. */
export async function renderCharts(
  labels: readonly string[],
  dir = RESULTS_DIR,
  out = CHARTS,
): Promise<string[]> {
  await mkdir(out, { recursive: true });
  const written: string[] = [];
  const all = await loadResults(labels, dir);
  for (const [scenario, byLabel] of all) {
    if (scenario === "memory") {
      const values = [...byLabel].flatMap(([label, r]) =>
        (r.memory?.samples ?? []).map((s) => ({
          t: s.t / 1000,
          y: s.rss / 2 ** 20,
          series: "RSS",
          label,
        })),
      );
      if (values.length === 0) continue;
      const path = join(out, "fleet-memory.svg");
      await renderChart(
        spec(
          "One replica's RSS from spawn through its initial list",
          "seconds since spawn",
          "MiB",
          values,
          labels.filter((l) => byLabel.has(l)),
        ),
        path,
      );
      written.push(path);
      continue;
    }
    const keys = new Set([...byLabel.values()].flatMap((r) => r.phases.map((p) => p.key)));
    for (const key of keys) {
      const values: Point[] = [];
      let title = key;
      for (const [label, r] of byLabel) {
        const p = r.phases.find((x) => x.key === key);
        if (p === undefined) continue;
        title = `${p.name}: API requests per second (${p.replicas} replicas)`;
        for (const row of p.perSecond)
          for (const verb of VERBS)
            values.push({ t: row.t, y: row.byVerb[verb] ?? 0, series: verb, label });
      }
      const path = join(out, `fleet-${key}.svg`);
      await renderChart(
        spec(
          title,
          "seconds since the phase started",
          "requests per second",
          values,
          labels.filter((l) => byLabel.has(l)),
        ),
        path,
      );
      written.push(path);
    }
  }
  return written;
}
