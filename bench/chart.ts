// Charts for BENCHMARKS.md, rendered from a bench's own output with Vega-Lite to SVG: no browser,
// no canvas, and the same input always draws the same picture.

import { writeFile } from "node:fs/promises";
import { parse, View } from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

/** Renders a Vega-Lite spec (its data inline) to an SVG file. */
export async function renderChart(spec: TopLevelSpec, path: string): Promise<void> {
  const view = new View(parse(compile(spec).spec), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  await writeFile(path, svg);
}

const SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";

/** One series of points for a line chart. */
export interface Series {
  readonly name: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

/** A line chart of several series with labelled axes; `logX` for sizes spanning decades. */
export function lineChart(options: {
  readonly title: string;
  readonly x: string;
  readonly y: string;
  readonly series: readonly Series[];
  readonly logX?: boolean;
}): TopLevelSpec {
  const values = options.series.flatMap((s) =>
    s.points.map((p) => ({ series: s.name, x: p.x, y: p.y })),
  );
  return {
    $schema: SCHEMA,
    title: options.title,
    width: 560,
    height: 300,
    data: { values },
    mark: { type: "line", point: true },
    encoding: {
      x: {
        field: "x",
        type: "quantitative",
        title: options.x,
        ...(options.logX === true ? { scale: { type: "log" } } : {}),
      },
      y: { field: "y", type: "quantitative", title: options.y },
      // Below the plot, labels whole: series names say what was measured and how.
      color: {
        field: "series",
        type: "nominal",
        title: null,
        legend: { orient: "bottom", columns: 2, labelLimit: 0 },
      },
    },
  };
}

/** One bar: its group along the x axis, the series it belongs to (its colour), and its height. */
export interface Bar {
  readonly group: string;
  readonly series: string;
  readonly value: number;
}

/** Bars grouped side by side, groups and series in the order given. */
export function groupedBarChart(options: {
  readonly title: string;
  readonly x: string;
  readonly y: string;
  readonly bars: readonly Bar[];
}): TopLevelSpec {
  const series = [...new Set(options.bars.map((b) => b.series))];
  return {
    $schema: SCHEMA,
    title: options.title,
    width: 420,
    height: 260,
    data: { values: options.bars.map((b) => ({ ...b })) },
    mark: "bar",
    encoding: {
      x: { field: "group", type: "nominal", title: options.x, sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: "series", type: "nominal", sort: series },
      y: { field: "value", type: "quantitative", title: options.y },
      color: {
        field: "series",
        type: "nominal",
        title: null,
        sort: series,
        legend: { orient: "bottom", labelLimit: 0 },
      },
    },
  };
}
