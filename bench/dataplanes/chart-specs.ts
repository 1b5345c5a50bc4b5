// The Vega-Lite specs of the data-plane charts (charts.ts fills them with a run's figures): bars
// per proxy in a panel per Registry size, each proxy alone, in hop mode and in zero-hop mode; and
// the write-to-answer times as one tick per write.

import type { TopLevelSpec } from "vega-lite";
import { PROXIES } from "./proxies.ts";

/** The bars of each proxy, in this order. */
export const VARIANTS = {
  alone: "the proxy alone",
  "alone-pooled": "nginx alone, upstream connections kept (as its zero-hop config)",
  hop: "shipped config + sidecar (hop)",
  "zero-hop": "shipped zero-hop config + its sidecar",
} as const;
const VARIANT_ORDER = Object.values(VARIANTS);

/** The stacked parts of the CPU bars. */
export const PARTS = [
  "the proxy alone",
  "nginx alone, upstream connections kept",
  "the proxy, in hop mode",
  "the sidecar, in hop mode",
  "the proxy, zero-hop",
  "the sidecar, zero-hop",
] as const;

const SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";
const ORDER = PROXIES.map((p) => p.name);
const proxyAxis = {
  field: "proxy",
  type: "nominal",
  title: null,
  sort: ORDER,
  axis: { labelAngle: 0 },
} as const;
const legend = { orient: "bottom", labelLimit: 0, columns: 2 } as const;

/** A chart's title, the sizes of its panels in order (the `apps` field), and its rows. */
export interface Panels {
  readonly title: string[];
  readonly sizes: string[];
  readonly values: Record<string, unknown>[];
}

type FacetSpec = Extract<TopLevelSpec, { facet: unknown }>;

/** A panel per size of the bars `spec` draws, a group per proxy and a bar per variant. */
function panelPerSize(p: Panels, spec: FacetSpec["spec"]): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title: p.title,
    data: { values: p.values },
    facet: { column: { field: "apps", type: "nominal", title: null, sort: p.sizes } },
    spec: { width: 360, height: 260, ...spec },
  };
}

const perProxy = { x: proxyAxis, xOffset: { field: "variant", sort: VARIANT_ORDER } } as const;

/** Grouped bars: each proxy alone, in hop and in zero-hop mode, the ratio over each shipped bar. */
export function throughputChart(p: Panels): TopLevelSpec {
  return panelPerSize(p, {
    encoding: {
      ...perProxy,
      y: { field: "rps", type: "quantitative", title: "req/s (median of rounds)" },
    },
    layer: [
      {
        mark: "bar",
        encoding: {
          color: {
            field: "variant",
            type: "nominal",
            title: null,
            sort: VARIANT_ORDER,
            scale: { domain: VARIANT_ORDER, range: ["#9ecae9", "#c6dbef", "#4c78a8", "#54a24b"] },
            legend,
          },
        },
      },
      {
        mark: { type: "text", dy: -6, fontSize: 10 },
        encoding: { text: { field: "label", type: "nominal" } },
      },
    ],
  });
}

/** Stacked bars: the proxy's CPU per request alone, and the proxy's plus its sidecar's. */
export function cpuChart(p: Panels): TopLevelSpec {
  return panelPerSize(p, {
    mark: "bar",
    encoding: {
      ...perProxy,
      y: { field: "us", type: "quantitative", title: "µs of CPU per request", stack: "zero" },
      color: {
        field: "part",
        type: "nominal",
        title: null,
        sort: [...PARTS],
        scale: {
          domain: [...PARTS],
          range: ["#9ecae9", "#c6dbef", "#4c78a8", "#f58518", "#54a24b", "#e45756"],
        },
        legend,
      },
      order: { field: "part", sort: "ascending" },
    },
  });
}

/** One tick per write (ms, log scale) for each series in `order`; a dashed rule at `targetMs`. */
export function writeChart(
  title: string[],
  order: string[],
  values: { readonly series: string; readonly ms: number }[],
  targetMs: number,
): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title,
    width: 640,
    height: 300,
    data: { values },
    layer: [
      {
        mark: { type: "tick", opacity: 0.5, thickness: 2 },
        encoding: {
          x: {
            field: "series",
            type: "nominal",
            title: null,
            sort: order,
            // Vega cuts labels to the band's width otherwise.
            axis: { labelAngle: 0, labelLimit: 400 },
          },
          y: {
            field: "ms",
            type: "quantitative",
            title: "ms from the write to the proxy's new answer",
            scale: { type: "log" },
          },
        },
      },
      {
        mark: { type: "rule", strokeDash: [4, 4], color: "#e45756" },
        encoding: { y: { datum: targetMs } },
      },
    ],
  };
}

/** A horizontal line across a chart: a target (dashed red) or another tool's published time. */
export interface ReferenceLine {
  readonly ms: number;
  readonly label: string;
  readonly kind: "target" | "anchor";
}

/**
 * One tick per rotation (ms, log scale) for each series in `order` (a label's ", " breaks its
 * line), a band per credential size in `sizes` within it, its p50/p99/max written over its
 * slowest; with `lines` across: the targets, and the times other ways of rotating a credential
 * take by their published defaults.
 */
export function rotationChart(
  title: string[],
  order: string[],
  sizes: string[],
  values: { readonly series: string; readonly size: string; readonly ms: number }[],
  summaries: { readonly series: string; readonly size: string; readonly ms: number }[],
  lines: readonly ReferenceLine[],
  titles: { readonly y: string; readonly color: string } = {
    y: "ms from the write to the upstream getting the new value",
    color: "every App's credential value",
  },
): TopLevelSpec {
  const y = { field: "ms", type: "quantitative" } as const;
  const x = {
    field: "series",
    type: "nominal",
    title: null,
    sort: order,
    axis: { labelAngle: 0, labelLimit: 400, labelExpr: "split(datum.label, ', ')" },
  } as const;
  const xOffset = { field: "size", sort: sizes } as const;
  const rule = (kind: ReferenceLine["kind"], color: string) => ({
    data: { values: lines.filter((l) => l.kind === kind) },
    mark: { type: "rule" as const, strokeDash: [4, 4], color },
    encoding: { y },
  });
  return {
    $schema: SCHEMA,
    title,
    width: 900,
    height: 400,
    layer: [
      {
        data: { values },
        mark: { type: "tick", opacity: 0.5, thickness: 2 },
        encoding: {
          x,
          xOffset,
          y: {
            ...y,
            title: titles.y,
            scale: { type: "log" },
          },
          color: {
            field: "size",
            type: "nominal",
            title: titles.color,
            sort: sizes,
            scale: { range: ["#54a24b", "#4c78a8"] },
            legend: { orient: "bottom", titleLimit: 0 },
          },
        },
      },
      {
        data: { values: summaries },
        mark: { type: "text", dy: -10, fontSize: 9 },
        encoding: { x, xOffset, y, text: { field: "label", type: "nominal" } },
      },
      rule("target", "#e45756"),
      rule("anchor", "#888888"),
      // The anchors' labels over the empty top left; the targets' would cover ticks (the title says them).
      {
        data: { values: lines.filter((l) => l.kind === "anchor") },
        mark: { type: "text", align: "left", dx: 4, dy: -6, fontSize: 10 },
        encoding: { y, x: { value: 0 }, text: { field: "label", type: "nominal" } },
      },
    ],
  };
}
