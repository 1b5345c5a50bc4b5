// The data-plane suite's figures under load: per proxy and Registry size, hop mode and zero-hop
// mode each against the proxy alone, each a median over rounds of the per-round figure (ratios
// and differences taken a round at a time, so drift between rounds cancels).

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, median, type Row } from "../measure.ts";
import { medianRatio, type RunResult } from "../rounds.ts";
import type { DataplanesData, SizeData } from "./data.ts";
import {
  type Baseline,
  baselineLabel,
  baselineOf,
  labelOf,
  PROXIES,
  type ShippedVariant,
  variantName,
  zeroHopLabelOf,
} from "./proxies.ts";
import { writeRows } from "./report-writes.ts";

/** The acceptance targets of req/s against alone, by mode and proxy (issue 30; zero-hop ADR 34). */
export const TARGETS: Record<ShippedVariant, Partial<Record<PlaneKind, number>>> = {
  hop: { nginx: 0.7 },
  "zero-hop": { haproxy: 0.9, caddy: 0.9 },
};

/** What zero-hop aims at beyond its target, shown beside it. */
export const ZERO_HOP_GOAL = 0.95;

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

function compare(kind: PlaneKind, variant: ShippedVariant, apps: number, size: SizeData) {
  const runs = size.runs[variantName(kind, variant)]!;
  const baseline = baselineOf(kind, variant);
  const alone = size.runs[variantName(kind, baseline)]!;
  const split = size.split[variantName(kind, variant)]!;
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
const k = (n: number) => `${fmt(n / 1000, 1)}k`;
const signed = (ms: number) => `${ms < 0 ? "" : "+"}${fmt(ms, 2)}`;
/** "1k Apps", "10k Apps". */
export const appsLabel = (apps: number) => `${apps / 1000}k Apps`;

/**
 * The suite's rows for the printed table: per size and proxy, three for hop mode and three for
 * zero-hop mode; then the write-to-answer rows.
 */
export function dataplaneRows(data: DataplanesData): Row[] {
  const all = [...comparisons(data, "hop"), ...comparisons(data, "zero-hop")];
  const under = Object.keys(data.sizes).flatMap((apps) =>
    PROXIES.flatMap(({ kind }) =>
      all
        .filter((c) => c.apps === Number(apps) && c.kind === kind)
        .flatMap((c) => variantRows(c, data)),
    ),
  );
  return [...under, ...(data.writeToAnswer === undefined ? [] : writeRows(data.writeToAnswer))];
}

function variantRows(c: Comparison, data: DataplanesData): Row[] {
  const setup = `${data.load}, ${data.connections} connections, random hosts, ${data.rounds} rounds x ${data.seconds} s`;
  const hop = c.variant === "hop";
  const name = `${hop ? labelOf(c.kind) : zeroHopLabelOf(c.kind)}, ${appsLabel(c.apps)}`;
  const what = hop
    ? "shipped config asking the sidecar"
    : "shipped zero-hop config, its sidecar pushing the table";
  const target = TARGETS[c.variant][c.kind];
  const goal = hop ? "" : ` (goal ${fmt(ZERO_HOP_GOAL, 2)}x)`;
  // A zero-hop sidecar does no per-request work: its share is hundredths of a µs.
  const sidecar = hop
    ? `sidecar ${fmt(c.sidecarCpuUs, 1)}`
    : `sidecar ${fmt(c.sidecarCpuUs, 2)}; the sidecar ${fmt(c.sidecarMsPerS, 2)} ms/s`;
  return [
    {
      bench: `${name}: req/s, ${what} (${setup})`,
      figure: `${k(c.rps)} req/s`,
      baseline: `${baselineLabel(c.kind, c.baseline)} ${k(c.aloneRps)}`,
      ratio: `${fmt(c.rpsRatio, 2)}x`,
      target: target === undefined ? "reported" : `>= ${fmt(target, 2)}x${goal}`,
      met: target === undefined ? "-" : c.rpsRatio >= target ? "yes" : "no",
    },
    {
      bench: `${name}: latency added, p50 / p99 (same runs)`,
      figure: `${signed(c.p50AddedMs)} / ${signed(c.p99AddedMs)} ms`,
      baseline: `${baselineLabel(c.kind, c.baseline)} ${fmt(c.aloneP50Ms, 2)} / ${fmt(c.aloneP99Ms, 2)} ms`,
      ratio: "-",
      target: "reported",
      met: "-",
    },
    {
      bench: `${name}: CPU per request, proxy + sidecar (same runs)`,
      figure: `${fmt(c.cpuUs, 1)} µs (proxy ${fmt(c.proxyCpuUs, 1)}, ${sidecar})`,
      baseline: `${baselineLabel(c.kind, c.baseline)} ${fmt(c.aloneCpuUs, 1)} µs`,
      ratio: `${fmt(c.cpuRatio, 2)}x`,
      target: "reported",
      met: "-",
    },
  ];
}
