// The write-to-answer figures: per variant, the times from just before an API write until the
// proxy gave the new answer, as p50 / p99 / max; each zero-hop proxy against the target, and
// nginx in hop mode beside them for comparison.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, quantile, type Row } from "../measure.ts";
import type { WriteToAnswerData } from "./data.ts";
import { labelOf, PROXIES, variantName, zeroHopLabelOf } from "./proxies.ts";

/** The zero-hop target for write to answer: p99 under this many ms. */
export const WRITE_P99_TARGET_MS = 100;

/** One variant's write-to-answer times in short. */
export interface WriteSummary {
  readonly name: string;
  readonly writes: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** The summary of `samples` (ms) under `name`. */
export function summarizeWrites(name: string, samples: readonly number[]): WriteSummary {
  return {
    name,
    writes: samples.length,
    p50Ms: quantile(samples, 0.5),
    p99Ms: quantile(samples, 0.99),
    maxMs: Math.max(...samples),
  };
}

/** The hop variant measured beside the zero-hop ones. */
export const HOP_WRITES: PlaneKind = "nginx";

const times = (s: WriteSummary) =>
  `${fmt(s.p50Ms, 1)} / ${fmt(s.p99Ms, 1)} / ${fmt(s.maxMs, 1)} ms`;

/** A row per zero-hop proxy measured, then one for nginx in hop mode. */
export function writeRows(w: WriteToAnswerData): Row[] {
  const of = (name: string) => {
    const samples = w.samples[name];
    return samples === undefined ? null : summarizeWrites(name, samples);
  };
  const hop = of(variantName(HOP_WRITES, "hop"));
  // The procedure in the first row only, as the load rows give their setup once.
  let described = false;
  const setup = (s: WriteSummary) => {
    const how = described ? "the same procedure" : w.write;
    described = true;
    return `${w.apps / 1000}k Apps, ${s.writes} writes (${how})`;
  };
  const rows = PROXIES.flatMap(({ kind }): Row[] => {
    const s = of(variantName(kind, "zero-hop"));
    if (s === null) return [];
    const met = s.p99Ms < WRITE_P99_TARGET_MS;
    return [
      {
        bench: `write → answer at the proxy, ${zeroHopLabelOf(kind)} (zero-hop), ${setup(s)}: p50 / p99 / max`,
        figure: times(s),
        baseline:
          hop === null
            ? "-"
            : `${labelOf(HOP_WRITES)} (hop mode) ${fmt(hop.p50Ms, 1)} / ${fmt(hop.p99Ms, 1)} ms`,
        ratio: hop === null ? "-" : `p99 ${fmt(s.p99Ms / hop.p99Ms, 2)}x hop`,
        target: `p99 < ${WRITE_P99_TARGET_MS} ms`,
        met: met ? "yes" : "no",
      },
    ];
  });
  if (hop !== null)
    rows.push({
      bench: `write → answer at the proxy, ${labelOf(HOP_WRITES)} (hop mode), ${setup(hop)}: p50 / p99 / max`,
      figure: times(hop),
      baseline: "-",
      ratio: "-",
      target: "reported",
      met: "-",
    });
  return rows;
}

/** A change costs in proportion to itself (ADR 60): p99 at the larger Registry over the smaller. */
export const SCALE_P99_RATIO_TARGET = 1.5;
/** And under this many ms at both sizes. */
export const SCALE_P99_TARGET_MS = 50;

/** Times by variant at one Registry size: a write-to-answer or a rotation run. */
export interface TimedAtSize {
  readonly apps: number;
  readonly samples: Record<string, number[]>;
}

/** A variant compared across sizes: its label, its `variantName`, whether the targets hold it. */
export type ScaleVariant = readonly [label: string, name: string, targeted: boolean];

/**
 * Per variant timed at two Registry sizes: its p99 at the larger against the smaller, with the
 * targets of ADR 60 where `targeted` (reported for Caddy in zero-hop mode, whose every push is a
 * reload of its whole configuration).
 */
export function scaleRows(
  what: string,
  runs: readonly TimedAtSize[],
  variants: readonly ScaleVariant[],
): Row[] {
  if (runs.length < 2) return [];
  const [small, large] = [...runs].sort((a, b) => a.apps - b.apps) as [TimedAtSize, TimedAtSize];
  return variants.flatMap(([label, name, targeted]): Row[] => {
    const [a, b] = [small.samples[name], large.samples[name]];
    if (a === undefined || b === undefined) return [];
    const [s, l] = [summarizeWrites(name, a), summarizeWrites(name, b)];
    const ratio = l.p99Ms / s.p99Ms;
    const met = ratio <= SCALE_P99_RATIO_TARGET && Math.max(s.p99Ms, l.p99Ms) < SCALE_P99_TARGET_MS;
    return [
      {
        bench: `${what} p99, ${label}, ${large.apps / 1000}k against ${small.apps / 1000}k Apps`,
        figure: `${fmt(l.p99Ms, 1)} ms`,
        baseline: `${fmt(s.p99Ms, 1)} ms`,
        ratio: `${fmt(ratio, 2)}x`,
        target: targeted
          ? `≤ ${SCALE_P99_RATIO_TARGET}x, both < ${SCALE_P99_TARGET_MS} ms`
          : "reported",
        met: targeted ? (met ? "yes" : "no") : "-",
      },
    ];
  });
}

/** The write-to-answer variants compared across sizes: each zero-hop proxy, then hop mode. */
export const WRITE_SCALE_VARIANTS: readonly ScaleVariant[] = [
  ...PROXIES.map(
    ({ kind }): ScaleVariant => [
      `${zeroHopLabelOf(kind)} (zero-hop)`,
      variantName(kind, "zero-hop"),
      kind !== "caddy",
    ],
  ),
  [`${labelOf(HOP_WRITES)} (hop mode)`, variantName(HOP_WRITES, "hop"), true],
];
