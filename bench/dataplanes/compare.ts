// Each shipped variant against the proxy alone at one Registry size: medians over rounds of the
// per-round figure (ratios and differences taken a round at a time, so drift between rounds
// cancels), read from the suite's saved runs.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, median } from "../measure.ts";
import { medianRatio, type RunResult } from "../rounds.ts";
import type { DataplanesData, SizeData } from "./data.ts";
import { type Baseline, baselineOf, PROXIES, type ShippedVariant, variantName } from "./proxies.ts";

/** One proxy at one size, one shipped variant against the proxy alone (`baseline`). */
export interface Comparison {
  readonly kind: PlaneKind;
  readonly variant: ShippedVariant;
  readonly baseline: Baseline;
  readonly apps: number;
  readonly rps: number;
  readonly aloneRps: number;
  readonly rpsRatio: number;
  readonly p50AddedMs: number;
  readonly p99AddedMs: number;
  readonly aloneP50Ms: number;
  readonly aloneP99Ms: number;
  /** Proxy + sidecar CPU per request, and its two parts. */
  readonly cpuUs: number;
  readonly proxyCpuUs: number;
  readonly sidecarCpuUs: number;
  /** The sidecar's CPU per second over the runs, ms. */
  readonly sidecarMsPerS: number;
  readonly aloneCpuUs: number;
  readonly cpuRatio: number;
}

/** Every proxy at every size of `data` where `variant` was measured. */
export function comparisons(data: DataplanesData, variant: ShippedVariant = "hop"): Comparison[] {
  return Object.entries(data.sizes).flatMap(([apps, size]) =>
    PROXIES.filter(({ kind }) =>
      [variant, baselineOf(kind, variant)].every((v) => size.runs[variantName(kind, v)]),
    ).map(({ kind }) => compare(kind, variant, Number(apps), size)),
  );
}

/**
 * `variant` of `kind` at one size against its baseline; `name` picks the runs (default the
 * variant's own; `credentialsName` for them with credentials on).
 */
export function compare(
  kind: PlaneKind,
  variant: ShippedVariant,
  apps: number,
  size: SizeData,
  name = variantName(kind, variant),
): Comparison {
  const runs = size.runs[name]!;
  const baseline = baselineOf(kind, variant);
  const alone = size.runs[variantName(kind, baseline)]!;
  const split = size.split[name]!;
  const m = (rs: readonly RunResult[], f: (r: RunResult) => number) => median(rs.map(f));
  const added = (f: (r: RunResult) => number) =>
    median(runs.map((r, i) => f(r) - f(alone[i]!))) / 1000;
  const cpu = (r: RunResult) => r.cpuPerRequestUs;
  return {
    kind,
    variant,
    baseline,
    apps,
    rps: m(runs, (r) => r.rps),
    aloneRps: m(alone, (r) => r.rps),
    rpsRatio: medianRatio(runs, alone, (r) => r.rps),
    p50AddedMs: added((r) => r.p50Us),
    p99AddedMs: added((r) => r.p99Us),
    aloneP50Ms: m(alone, (r) => r.p50Us) / 1000,
    aloneP99Ms: m(alone, (r) => r.p99Us) / 1000,
    cpuUs: m(runs, cpu),
    proxyCpuUs: median(split.map((s) => s.proxyUs)),
    sidecarCpuUs: median(split.map((s) => s.sidecarUs)),
    // Summed over the rounds: the CPU clock ticks every 10 ms, about what an idle sidecar uses
    // in a second.
    sidecarMsPerS:
      sum(split.map((s, i) => s.sidecarUs * runs[i]!.requests)) /
      sum(runs.map((r) => r.seconds)) /
      1000,
    aloneCpuUs: m(alone, cpu),
    cpuRatio: medianRatio(runs, alone, cpu),
  } satisfies Comparison;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
/** "11.7k". */
export const k = (n: number) => `${fmt(n / 1000, 1)}k`;
/** "1k Apps", "10k Apps". */
export const appsLabel = (apps: number) => `${apps / 1000}k Apps`;
