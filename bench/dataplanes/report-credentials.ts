// Credentials on against off (ADR 53): per size and variant of CREDENTIAL_VARIANTS, the mode's
// req/s against the proxy alone with every App's `Authorization` set, beside the same mode's
// without, both between the same two runs of the proxy alone in every round. What the header
// costs is the median over rounds of the difference of the two ratios, a round at a time.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, median, type Row } from "../measure.ts";
import { appsLabel, type Comparison, compare, k } from "./compare.ts";
import { bytesLabel, CREDENTIAL } from "./credentials.ts";
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

/** One mode at one Registry size, with credentials of one size on, and off. */
export interface CredentialsComparison {
  readonly kind: PlaneKind;
  readonly variant: ShippedVariant;
  readonly apps: number;
  /** The bytes of every App's credential value. */
  readonly bytes: number;
  readonly off: Comparison;
  readonly on: Comparison;
  /** The median over rounds of (ratio off − ratio on): what the header takes off the ratio. */
  readonly cost: number;
}

/** Every mode of CREDENTIAL_VARIANTS measured with credentials on and off, per size. */
export function credentialComparisons(data: DataplanesData): CredentialsComparison[] {
  return Object.entries(data.sizes).flatMap(([apps, size]) =>
    (size.credentialBytes ?? []).flatMap((bytes) =>
      CREDENTIAL_VARIANTS.flatMap(([kind, variant]): CredentialsComparison[] => {
        const name = credentialsName(kind, variant, bytes);
        const on = size.runs[name];
        const off = size.runs[variantName(kind, variant)];
        const alone = size.runs[variantName(kind, baselineOf(kind, variant))];
        if (on === undefined || off === undefined || alone === undefined) return [];
        const ratio = (r: { rps: number }, i: number) => r.rps / alone[i]!.rps;
        return [
          {
            kind,
            variant,
            apps: Number(apps),
            bytes,
            off: compare(kind, variant, Number(apps), size),
            on: compare(kind, variant, Number(apps), size, name),
            cost: median(off.map((r, i) => ratio(r, i) - ratio(on[i]!, i))),
          },
        ];
      }),
    ),
  );
}

const label = (kind: PlaneKind, variant: ShippedVariant) =>
  variant === "hop" ? labelOf(kind) : zeroHopLabelOf(kind);
const ratioOf = (c: Comparison) =>
  `${fmt(c.rpsRatio, 2)}x (${k(c.rps)} req/s, ${fmt(c.cpuUs, 1)} µs a request)`;
const target = `costs <= ${fmt(CREDENTIALS_COST_TARGET, 2)}x`;

/**
 * A row per mode, Registry size and credential size measured both ways, then one per mode left
 * out with credentials on.
 */
export function credentialRows(data: DataplanesData): Row[] {
  let described = false;
  const rows = credentialComparisons(data).map((c): Row => {
    const how = described
      ? "same procedure"
      : `every App's credential ${CREDENTIAL.prefix.trim()} + a value of that size, --serve-credentials true; on and off between the same two runs alone, every round`;
    described = true;
    return {
      bench: `${label(c.kind, c.variant)}, ${appsLabel(c.apps)}, ${bytesLabel(c.bytes)} credentials: req/s against the proxy alone, on (${how})`,
      figure: `on ${ratioOf(c.on)}`,
      baseline: `off ${ratioOf(c.off)}`,
      ratio: `costs ${fmt(c.cost, 3)}x`,
      target,
      met: c.cost <= CREDENTIALS_COST_TARGET ? "yes" : "no",
    };
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
