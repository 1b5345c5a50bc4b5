// The rotation figures: per proxy and mode, the times from just before the API write of an App's
// new credential value until its upstream got it, as p50 / p99 / max, each against its target;
// then the requests sent after each first answer with the new value that carried the old one
// (must be none), over every variant.

import type { PlaneKind } from "../../test/support/data-plane.ts";
import { fmt, type Row } from "../measure.ts";
import { bytesLabel } from "./credentials.ts";
import type { AfterNewCounts, RotationData } from "./data.ts";
import { labelOf, PROXIES, type ShippedVariant, variantName, zeroHopLabelOf } from "./proxies.ts";
import { type ScaleVariant, scaleRows, summarizeWrites } from "./report-writes.ts";
import { addCounts, NO_COUNTS } from "./rotation-observer.ts";

/**
 * The p99 targets of rotation, ms, by mode and proxy (issue 43): none for Caddy in zero-hop mode,
 * where every push is a reload of its whole configuration; measured and explained.
 */
export const ROTATION_P99_TARGETS_MS: Record<ShippedVariant, Partial<Record<PlaneKind, number>>> = {
  hop: { nginx: 20, caddy: 20, haproxy: 20 },
  "zero-hop": { nginx: 100, haproxy: 100 },
};

/**
 * How long the other ways of getting a new credential to an application take by their projects'
 * published defaults (BENCHMARKS.md, "Rotation"): each a bound, not a measurement.
 */
export const ROTATION_ANCHORS: readonly { readonly ms: number; readonly label: string }[] = [
  {
    ms: 60_000,
    label: "mounted Secret: the kubelet's sync period (1 min), plus its cache's delay",
  },
  { ms: 120_000, label: "Secrets Store CSI driver: its rotation poll (2 min)" },
  { ms: 300_000, label: "Vault Agent: a KV secret re-rendered (5 min), then a restart or signal" },
];

/** The variants in the order of the rows and the chart: each proxy hop, then zero-hop. */
export const ROTATION_VARIANTS: readonly (readonly [PlaneKind, ShippedVariant])[] = PROXIES.flatMap(
  ({ kind }) => [
    [kind, "hop"],
    [kind, "zero-hop"],
  ],
);

/** How a rotation variant is labelled: "nginx auth_request, hop". */
export const rotationLabel = (kind: PlaneKind, variant: ShippedVariant) =>
  variant === "hop" ? `${labelOf(kind)}, hop` : `${zeroHopLabelOf(kind)}, zero-hop`;

/** Every variant's requests after the first new answer, summed over every credential size. */
export function afterNewTotal(rotations: readonly RotationData[]): AfterNewCounts {
  return rotations.flatMap((r) => Object.values(r.afterNew)).reduce(addCounts, NO_COUNTS);
}

/**
 * Per credential size, a row per variant (measured or not); then one row of the requests after
 * the first new answer that carried the old value, over them all.
 */
export function rotationRows(rotations: readonly RotationData[]): Row[] {
  let described = false;
  const rows = rotations.flatMap((r) =>
    ROTATION_VARIANTS.flatMap(([kind, variant]): Row[] => {
      const name = variantName(kind, variant);
      const limit = ROTATION_P99_TARGETS_MS[variant][kind];
      const target =
        limit === undefined ? "reported (a reload per push)" : `p99 < ${fmt(limit, 0)} ms`;
      const samples = r.samples[name];
      const why = r.unmeasured[name];
      if (samples === undefined && why === undefined) return [];
      const what = `rotation → upstream, ${rotationLabel(kind, variant)}, ${r.apps / 1000}k Apps, ${bytesLabel(r.valueBytes)} values`;
      if (samples === undefined)
        return [
          { bench: what, figure: "not measured", baseline: why!, ratio: "-", target, met: "no" },
        ];
      const s = summarizeWrites(name, samples);
      const how = described ? "the same procedure" : r.rotation;
      described = true;
      return [
        {
          bench: `${what}, ${s.writes} rotations (${how}): p50 / p99 / max`,
          figure: `${fmt(s.p50Ms, 1)} / ${fmt(s.p99Ms, 1)} / ${fmt(s.maxMs, 1)} ms`,
          baseline: "-",
          ratio: "-",
          target,
          met: limit === undefined ? "-" : s.p99Ms < limit ? "yes" : "no",
        },
      ];
    }),
  );
  // The same credential size at two Registry sizes: a rotation costs in proportion to itself.
  const variants = ROTATION_VARIANTS.map(
    ([kind, variant]): ScaleVariant => [
      rotationLabel(kind, variant),
      variantName(kind, variant),
      variant === "hop" || kind !== "caddy",
    ],
  );
  for (const bytes of new Set(rotations.map((r) => r.valueBytes))) {
    const runs = rotations.filter((r) => r.valueBytes === bytes);
    rows.push(...scaleRows(`rotation → upstream (${bytesLabel(bytes)})`, runs, variants));
  }
  const total = afterNewTotal(rotations);
  const first = rotations[0];
  if (first !== undefined && total.checked > 0)
    rows.push({
      bench: `rotation: requests sent after the first answer with the new value whose upstream got the old one (every variant and size measured, ${first.connections} connections asking until ${first.checkMs} ms after it)`,
      figure: `${total.old} of ${total.checked}`,
      baseline: `${total.failed} failed connections, ${total.other} other answers`,
      ratio: "-",
      target: "0",
      met: total.old === 0 ? "yes" : "no",
    });
  return rows;
}

/** What the table leaves out, per size: the untimed rotations, each variant's counts. */
export function rotationLines(rotations: readonly RotationData[]): string[] {
  return rotations.flatMap((r) => {
    const size = `rotation, ${bytesLabel(r.valueBytes)} values`;
    const lines = [
      "",
      `${size}, the untimed rotations before (ms): ${Object.entries(r.warmUp)
        .map(([name, ms]) => `${name} ${ms.map((m) => fmt(m, 1)).join(", ")}`)
        .join("; ")}`,
      `${size}, requests after the first new answer (old / checked / failed / other): ${Object.entries(
        r.afterNew,
      )
        .map(([name, c]) => `${name} ${c.old} / ${c.checked} / ${c.failed} / ${c.other}`)
        .join("; ")}`,
    ];
    for (const [name, why] of Object.entries(r.unmeasured))
      lines.push(`${size}, ${name} not measured: ${why}`);
    return lines;
  });
}
