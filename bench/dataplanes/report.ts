// The data-plane suite's figures: per proxy and Registry size, hop mode against the proxy alone,
// each a median over rounds of the per-round figure (ratios and differences taken a round at a
// time, so drift between rounds cancels).

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, median, type Row } from "../measure.ts";
import { medianRatio, type RunResult } from "../rounds.ts";
import { labelOf, PROXIES, variantName } from "./proxies.ts";
import type { DataplanesData, SizeData } from "./suite.ts";

/** The acceptance target of hop mode, by proxy (issue 30): nginx only. */
export const HOP_TARGET: Partial<Record<PlaneKind, number>> = { nginx: 0.7 };

/** One proxy at one size, hop mode against alone. */
export interface Comparison {
  readonly kind: PlaneKind;
  readonly apps: number;
  readonly hopRps: number;
  readonly aloneRps: number;
  readonly rpsRatio: number;
  readonly p50AddedMs: number;
  readonly p99AddedMs: number;
  readonly aloneP50Ms: number;
  readonly aloneP99Ms: number;
  /** Proxy + sidecar CPU per request in hop mode, and its two parts. */
  readonly hopCpuUs: number;
  readonly hopProxyCpuUs: number;
  readonly hopSidecarCpuUs: number;
  readonly aloneCpuUs: number;
  readonly cpuRatio: number;
}

/** Every proxy at every size of `data`. */
export function comparisons(data: DataplanesData): Comparison[] {
  return Object.entries(data.sizes).flatMap(([apps, size]) =>
    PROXIES.map(({ kind }) => compare(kind, Number(apps), size)),
  );
}

function compare(kind: PlaneKind, apps: number, size: SizeData): Comparison {
  const hop = size.runs[variantName(kind, "hop")]!;
  const alone = size.runs[variantName(kind, "alone")]!;
  const split = size.split[variantName(kind, "hop")]!;
  const m = (runs: readonly RunResult[], f: (r: RunResult) => number) => median(runs.map(f));
  const added = (f: (r: RunResult) => number) =>
    median(hop.map((h, i) => f(h) - f(alone[i]!))) / 1000;
  const cpu = (r: RunResult) => r.cpuPerRequestUs;
  return {
    kind,
    apps,
    hopRps: m(hop, (r) => r.rps),
    aloneRps: m(alone, (r) => r.rps),
    rpsRatio: medianRatio(hop, alone, (r) => r.rps),
    p50AddedMs: added((r) => r.p50Us),
    p99AddedMs: added((r) => r.p99Us),
    aloneP50Ms: m(alone, (r) => r.p50Us) / 1000,
    aloneP99Ms: m(alone, (r) => r.p99Us) / 1000,
    hopCpuUs: m(hop, cpu),
    hopProxyCpuUs: median(split.map((s) => s.proxyUs)),
    hopSidecarCpuUs: median(split.map((s) => s.sidecarUs)),
    aloneCpuUs: m(alone, cpu),
    cpuRatio: medianRatio(hop, alone, cpu),
  };
}

const k = (n: number) => `${fmt(n / 1000, 1)}k`;
const appsLabel = (apps: number) => `${apps / 1000}k Apps`;

/** The suite's rows for the printed table: three per proxy and size. */
export function dataplaneRows(data: DataplanesData): Row[] {
  const setup = `${data.load}, ${data.connections} connections, random hosts, ${data.rounds} rounds x ${data.seconds} s`;
  return comparisons(data).flatMap((c) => {
    const name = `${labelOf(c.kind)}, ${appsLabel(c.apps)}`;
    const target = HOP_TARGET[c.kind];
    return [
      {
        bench: `${name}: req/s, shipped config asking the sidecar (${setup})`,
        figure: `${k(c.hopRps)} req/s`,
        baseline: `${c.kind} alone ${k(c.aloneRps)}`,
        ratio: `${fmt(c.rpsRatio, 2)}x`,
        target: target === undefined ? "reported" : `>= ${fmt(target, 2)}x`,
        met: target === undefined ? "-" : c.rpsRatio >= target ? "yes" : "no",
      },
      {
        bench: `${name}: latency added, p50 / p99 (same runs)`,
        figure: `+${fmt(c.p50AddedMs, 2)} / +${fmt(c.p99AddedMs, 2)} ms`,
        baseline: `${c.kind} alone ${fmt(c.aloneP50Ms, 2)} / ${fmt(c.aloneP99Ms, 2)} ms`,
        ratio: "-",
        target: "reported",
        met: "-",
      },
      {
        bench: `${name}: CPU per request, proxy + sidecar (same runs)`,
        figure: `${fmt(c.hopCpuUs, 1)} µs (proxy ${fmt(c.hopProxyCpuUs, 1)}, sidecar ${fmt(c.hopSidecarCpuUs, 1)})`,
        baseline: `${c.kind} alone ${fmt(c.aloneCpuUs, 1)} µs`,
        ratio: `${fmt(c.cpuRatio, 2)}x`,
        target: "reported",
        met: "-",
      },
    ];
  });
}
