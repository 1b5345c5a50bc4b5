// Credentials on against off (ADR 53): per size and variant of CREDENTIAL_VARIANTS, the mode's
// req/s against the proxy alone with every App's `Authorization` set, beside the same mode's
// without, both between the same two runs of the proxy alone in every round. What the header
// costs is the median over rounds of the difference of the two ratios, a round at a time.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, median, type Row } from "../measure.ts";
import { appsLabel, type Comparison, compare, k } from "./compare.ts";
import type { DataplanesData } from "./data.ts";
import {
  baselineOf,
  CREDENTIAL_VARIANTS,
  credentialsName,
  labelOf,
  type ShippedVariant,
  variantName,
  zeroHopLabelOf,
} from "./proxies.ts";

/** The most the header may take off a mode's ratio against the proxy alone (issue 43). */
export const CREDENTIALS_COST_TARGET = 0.02;

/** One mode at one size, with credentials off and on. */
export interface CredentialsComparison {
  readonly kind: PlaneKind;
  readonly variant: ShippedVariant;
  readonly apps: number;
  readonly off: Comparison;
  readonly on: Comparison;
  /** The median over rounds of (ratio off − ratio on): what the header takes off the ratio. */
  readonly cost: number;
}

/** Every mode of CREDENTIAL_VARIANTS measured with credentials on and off, per size. */
export function credentialComparisons(data: DataplanesData): CredentialsComparison[] {
  return Object.entries(data.sizes).flatMap(([apps, size]) =>
    CREDENTIAL_VARIANTS.flatMap(([kind, variant]): CredentialsComparison[] => {
      const on = size.runs[credentialsName(kind, variant)];
      const off = size.runs[variantName(kind, variant)];
      const alone = size.runs[variantName(kind, baselineOf(kind, variant))];
      if (on === undefined || off === undefined || alone === undefined) return [];
      const ratio = (r: { rps: number }, i: number) => r.rps / alone[i]!.rps;
      return [
        {
          kind,
          variant,
          apps: Number(apps),
          off: compare(kind, variant, Number(apps), size),
          on: compare(kind, variant, Number(apps), size, credentialsName(kind, variant)),
          cost: median(off.map((r, i) => ratio(r, i) - ratio(on[i]!, i))),
        },
      ];
    }),
  );
}

const label = (kind: PlaneKind, variant: ShippedVariant) =>
  variant === "hop" ? labelOf(kind) : zeroHopLabelOf(kind);
const ratioOf = (c: Comparison) =>
  `${fmt(c.rpsRatio, 2)}x (${k(c.rps)} req/s, ${fmt(c.cpuUs, 1)} µs a request)`;
const target = `costs <= ${fmt(CREDENTIALS_COST_TARGET, 2)}x`;

/** A row per mode and size measured both ways, then one per mode left out with credentials on. */
export function credentialRows(data: DataplanesData): Row[] {
  let described = false;
  const rows = credentialComparisons(data).map((c): Row => {
    const how = described
      ? "same procedure"
      : "every App's credential Bearer + its 1 KiB value, --serve-credentials true; on and off between the same two runs alone, every round";
    described = true;
    return {
      bench: `${label(c.kind, c.variant)}, ${appsLabel(c.apps)}: req/s against the proxy alone, credentials on (${how})`,
      figure: `on ${ratioOf(c.on)}`,
      baseline: `off ${ratioOf(c.off)}`,
      ratio: `costs ${fmt(c.cost, 3)}x`,
      target,
      met: c.cost <= CREDENTIALS_COST_TARGET ? "yes" : "no",
    };
  });
  for (const [apps, size] of Object.entries(data.sizes))
    for (const [kind, variant] of CREDENTIAL_VARIANTS) {
      const why = size.credentialsLeftOut?.[credentialsName(kind, variant)];
      if (why === undefined) continue;
      rows.push({
        bench: `${label(kind, variant)}, ${appsLabel(Number(apps))}: req/s against the proxy alone, credentials on`,
        figure: "not measured",
        baseline: why,
        ratio: "-",
        target,
        met: "no",
      });
    }
  return rows;
}
