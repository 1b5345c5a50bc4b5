// Credentials on against off (ADR 53): per size and variant of CREDENTIAL_VARIANTS, the mode's
// req/s against the proxy alone with every App's `Authorization` set, beside the same mode's
// without, both between the same two runs of the proxy alone in every round. What the header
// costs is the median over rounds of the difference of the two ratios, a round at a time.
//
// Part of that is the header's, however it gets there: the proxy writes it and the upstream
// parses it on every request. The proxy alone setting a fixed one of the same size, in the same
// rounds, takes it out: the mode with credentials on against that, beside the mode off against
// the proxy alone, is what the sidecar and the lookup cost beyond the header itself.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, median, type Row } from "../measure.ts";
import type { RunResult } from "../rounds.ts";
import { appsLabel, type Comparison, compare, k } from "./compare.ts";
import { bytesLabel, CREDENTIAL } from "./credentials.ts";
import type { DataplanesData } from "./data.ts";
import {
  baselineOf,
  CREDENTIAL_VARIANTS,
  credentialsName,
  headerName,
  labelOf,
  type ShippedVariant,
  variantName,
  zeroHopLabelOf,
} from "./proxies.ts";

/**
 * The most credentials may take off a mode's ratio against the proxy alone beyond what the header
 * itself takes (issue 43).
 */
export const CREDENTIALS_COST_TARGET = 0.02;

/** The proxy alone setting a fixed `Authorization` of the credentials' size, in the same rounds. */
export interface HeaderCost {
  /** Its median req/s and CPU per request, µs. */
  readonly rps: number;
  readonly cpuUs: number;
  /** The median over rounds of (1 − its req/s ÷ the proxy alone's): the header's own cost. */
  readonly cost: number;
  /** The median over rounds of the mode's req/s with credentials on ÷ its. */
  readonly onRatio: number;
  /**
   * The median over rounds of (ratio off against the proxy alone − ratio on against it): what
   * credentials cost the mode beyond the header itself.
   */
  readonly beyond: number;
}

/** One mode at one Registry size, with credentials of one size on, and off. */
export interface CredentialsComparison {
  readonly kind: PlaneKind;
  readonly variant: ShippedVariant;
  readonly apps: number;
  /** The bytes of every App's credential value. */
  readonly bytes: number;
  readonly off: Comparison;
  readonly on: Comparison;
  /**
   * The median over rounds of (ratio off − ratio on): what credentials take off the ratio, the
   * header's own cost included.
   */
  readonly cost: number;
  /** Null where the proxy alone did not run with the header (results saved before it did). */
  readonly header: HeaderCost | null;
}

/** Every mode of CREDENTIAL_VARIANTS measured with credentials on and off, per size. */
export function credentialComparisons(data: DataplanesData): CredentialsComparison[] {
  return Object.entries(data.sizes).flatMap(([apps, size]) =>
    (size.credentialBytes ?? []).flatMap((bytes) =>
      CREDENTIAL_VARIANTS.flatMap(([kind, variant]): CredentialsComparison[] => {
        const name = credentialsName(kind, variant, bytes);
        const baseline = baselineOf(kind, variant);
        const on = size.runs[name];
        const off = size.runs[variantName(kind, variant)];
        const alone = size.runs[variantName(kind, baseline)];
        if (on === undefined || off === undefined || alone === undefined) return [];
        const ratio = (r: { rps: number }, i: number) => r.rps / alone[i]!.rps;
        const headed = size.runs[headerName(kind, baseline, bytes)];
        return [
          {
            kind,
            variant,
            apps: Number(apps),
            bytes,
            off: compare(kind, variant, Number(apps), size),
            on: compare(kind, variant, Number(apps), size, name),
            cost: median(off.map((r, i) => ratio(r, i) - ratio(on[i]!, i))),
            header: headed === undefined ? null : headerCost(alone, off, on, headed),
          },
        ];
      }),
    ),
  );
}

/** Every argument holds the same rounds' runs, in order. */
function headerCost(
  alone: readonly RunResult[],
  off: readonly RunResult[],
  on: readonly RunResult[],
  headed: readonly RunResult[],
): HeaderCost {
  return {
    rps: median(headed.map((r) => r.rps)),
    cpuUs: median(headed.map((r) => r.cpuPerRequestUs)),
    cost: median(headed.map((r, i) => 1 - r.rps / alone[i]!.rps)),
    onRatio: median(on.map((r, i) => r.rps / headed[i]!.rps)),
    beyond: median(off.map((r, i) => r.rps / alone[i]!.rps - on[i]!.rps / headed[i]!.rps)),
  };
}

const label = (kind: PlaneKind, variant: ShippedVariant) =>
  variant === "hop" ? labelOf(kind) : zeroHopLabelOf(kind);
const ratioOf = (c: Comparison) =>
  `${fmt(c.rpsRatio, 2)}x (${k(c.rps)} req/s, ${fmt(c.cpuUs, 1)} µs a request)`;
const target = `costs beyond the header itself <= ${fmt(CREDENTIALS_COST_TARGET, 2)}x`;

/**
 * Per mode, Registry size and credential size measured both ways, a row of the total cost, then
 * one of the header's own and the cost beyond it, which the target is for; then a row per mode
 * left out with credentials on.
 */
export function credentialRows(data: DataplanesData): Row[] {
  // The procedure is told once per kind of row, at its first.
  const told = new Set<string>();
  const how = (which: "total" | "header", text: string) => {
    if (told.has(which)) return "same procedure";
    told.add(which);
    return text;
  };
  const rows = credentialComparisons(data).flatMap((c): Row[] => {
    const name = `${label(c.kind, c.variant)}, ${appsLabel(c.apps)}, ${bytesLabel(c.bytes)} credentials`;
    const total: Row = {
      bench: `${name}: req/s against the proxy alone, on (${how("total", `every App's credential ${CREDENTIAL.prefix.trim()} + a value of that size, --serve-credentials true; on and off between the same two runs alone, every round`)})`,
      figure: `on ${ratioOf(c.on)}`,
      baseline: `off ${ratioOf(c.off)}`,
      ratio: `costs ${fmt(c.cost, 3)}x`,
      target: "reported",
      met: "-",
    };
    const h = c.header;
    if (h === null) return [total];
    return [
      total,
      {
        bench: `${name}: cost beyond the header itself (${how("header", `the proxy alone setting a fixed Authorization: ${CREDENTIAL.prefix.trim()} + a value of that size on every upstream request, beside on, between the same two runs alone; per round, the header itself 1 − its req/s ÷ alone's, beyond it ratio off − on ÷ alone with the header`)})`,
        figure: `on ${fmt(h.onRatio, 2)}x against alone with the header (${k(h.rps)} req/s, ${fmt(h.cpuUs, 1)} µs a request)`,
        baseline: `the header itself costs ${fmt(h.cost, 3)}x`,
        ratio: `costs ${fmt(h.beyond, 3)}x beyond the header itself`,
        target,
        met: h.beyond <= CREDENTIALS_COST_TARGET ? "yes" : "no",
      },
    ];
  });
  for (const [apps, size] of Object.entries(data.sizes))
    for (const bytes of size.credentialBytes ?? [])
      for (const [kind, variant] of CREDENTIAL_VARIANTS) {
        const why = size.credentialsLeftOut?.[credentialsName(kind, variant, bytes)];
        if (why === undefined) continue;
        rows.push({
          bench: `${label(kind, variant)}, ${appsLabel(Number(apps))}, ${bytesLabel(bytes)} credentials: req/s against the proxy alone, on`,
          figure: "not measured",
          baseline: why,
          ratio: "-",
          target,
          met: "no",
        });
      }
  return rows;
}
