// The data-plane suite's rows: under load, per proxy and Registry size, hop mode and zero-hop mode
// each against the proxy alone (compare.ts); credentials on against off; write to answer; rotation.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, type Row } from "../measure.ts";
import { appsLabel, type Comparison, comparisons, k } from "./compare.ts";
import { type DataplanesData, writesOf } from "./data.ts";
import { baselineLabel, labelOf, PROXIES, type ShippedVariant, zeroHopLabelOf } from "./proxies.ts";
import { credentialRows } from "./report-credentials.ts";
import { rotationRows } from "./report-rotation.ts";
import { tlsRows } from "./report-tls.ts";
import { scaleRows, WRITE_SCALE_VARIANTS, writeRows } from "./report-writes.ts";

/** The acceptance targets of req/s against alone, by mode and proxy (issue 30; zero-hop ADR 34). */
export const TARGETS: Record<ShippedVariant, Partial<Record<PlaneKind, number>>> = {
  hop: { nginx: 0.7 },
  "zero-hop": { haproxy: 0.9, caddy: 0.9 },
};

/** What zero-hop aims at beyond its target, shown beside it. */
export const ZERO_HOP_GOAL = 0.95;

const signed = (ms: number) => `${ms < 0 ? "" : "+"}${fmt(ms, 2)}`;

/**
 * The suite's rows for the printed table: per size and proxy, three for hop mode and three for
 * zero-hop mode; credentials on against off; then the write-to-answer and rotation rows.
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
  return [
    ...under,
    ...credentialRows(data),
    ...writesOf(data).flatMap(writeRows),
    ...scaleRows("write → answer", writesOf(data), WRITE_SCALE_VARIANTS),
    ...rotationRows(data.rotations ?? []),
    ...(data.tls === undefined ? [] : tlsRows(data.tls)),
  ];
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
