// The proxies the data-plane suite measures, the three ways it runs each, and how they are named
// in the table, the saved JSON and the charts.

import { spawnSync } from "node:child_process";
import type { PlaneKind } from "../../test/support/data-plane.ts";
import { bytesLabel } from "./credentials.ts";

/**
 * `alone`: the proxy routing every host to the upstream as its hop configuration reaches an
 * upstream; `alone-pooled`: the same with a pool of kept-alive upstream connections, as nginx's
 * zero-hop configuration has (Caddy and HAProxy keep them in both); `hop`: shipped, asking the
 * sidecar; `zero-hop`: shipped, answering from the table its own sidecar pushes into it.
 */
export type Variant = "alone" | "alone-pooled" | "hop" | "zero-hop";

/** A variant with the shipped configuration and a sidecar. */
export type ShippedVariant = "hop" | "zero-hop";

/** A variant without the sidecar. */
export type Baseline = "alone" | "alone-pooled";

/** Each proxy: its name, each shipped configuration's mechanism, zero-hop's baseline. */
export const ALL_PROXIES: readonly {
  readonly kind: PlaneKind;
  readonly name: string;
  /** The hop configuration's mechanism. */
  readonly label: string;
  /** The zero-hop configuration's mechanism. */
  readonly zeroHopLabel: string;
  /** The proxy alone reaching the upstream as the zero-hop configuration does. */
  readonly zeroHopBaseline: Baseline;
}[] = [
  {
    kind: "nginx",
    name: "nginx",
    label: "nginx auth_request",
    zeroHopLabel: "nginx Lua shared dict",
    // The hop configuration's `proxy_pass $mirror_upstream` opens a connection per request.
    zeroHopBaseline: "alone-pooled",
  },
  {
    kind: "caddy",
    name: "Caddy",
    label: "Caddy forward_auth",
    zeroHopLabel: "Caddy admin API",
    zeroHopBaseline: "alone",
  },
  {
    kind: "haproxy",
    name: "HAProxy",
    label: "HAProxy Lua httpclient",
    zeroHopLabel: "HAProxy runtime API map",
    zeroHopBaseline: "alone",
  },
];

/**
 * The proxies measured: all of them, or, for a diagnostic partial run, those BENCH_PROXIES names
 * (`BENCH_PROXIES=nginx,haproxy`); a run so filtered is not one to chart.
 */
const only = process.env.BENCH_PROXIES?.split(",");
export const PROXIES: typeof ALL_PROXIES =
  only === undefined ? ALL_PROXIES : ALL_PROXIES.filter((p) => only.includes(p.kind));

/** The measured server's name: "nginx alone", "nginx hop", "nginx zero-hop". */
export const variantName = (kind: PlaneKind, variant: Variant) => `${kind} ${variant}`;

/**
 * The same variant with credentials on: every App carries a `credential` whose value has `bytes`,
 * and its sidecar runs with `--serve-credentials true` ("nginx hop, 40 B credentials").
 */
export const credentialsName = (kind: PlaneKind, variant: ShippedVariant, bytes: number) =>
  `${variantName(kind, variant)}, ${bytesLabel(bytes)} credentials`;

/**
 * The proxy alone (`baseline`) setting `fixedAuthorization(bytes)` on every upstream request: what
 * the header costs on its own ("nginx alone-pooled, 1 KiB Authorization").
 */
export const headerName = (kind: PlaneKind, baseline: Baseline, bytes: number) =>
  `${variantName(kind, baseline)}, ${bytesLabel(bytes)} Authorization`;

/**
 * The variants measured with credentials on beside off, in the same rounds: nginx's hop mode (the
 * one hop configuration with a target) and every zero-hop mode.
 */
export const CREDENTIAL_VARIANTS: readonly (readonly [PlaneKind, ShippedVariant])[] = [
  ["nginx", "hop"],
  ["nginx", "zero-hop"],
  ["caddy", "zero-hop"],
  ["haproxy", "zero-hop"],
];

/** What `variant` of `kind` is compared with. */
export const baselineOf = (kind: PlaneKind, variant: ShippedVariant): Baseline =>
  variant === "hop" ? "alone" : ALL_PROXIES.find((p) => p.kind === kind)!.zeroHopBaseline;

/**
 * A run beside a mode's with credentials off, in its baseline's group of rounds: the mode with
 * credentials of `bytes` on, or its baseline setting `fixedAuthorization(bytes)`.
 */
export type CredentialRun =
  | {
      readonly run: "on";
      readonly variant: ShippedVariant;
      readonly bytes: number;
      readonly name: string;
    }
  | {
      readonly run: "header";
      readonly variant: ShippedVariant;
      readonly baseline: Baseline;
      readonly bytes: number;
      readonly name: string;
    };

/**
 * `kind`'s runs beside its modes off, for credentials of `sizes`, in the order its groups run
 * them: per size and mode of CREDENTIAL_VARIANTS, the mode on, then its baseline with the header
 * (once per baseline and size), so that the two run next to each other whichever way round.
 */
export function credentialRuns(kind: PlaneKind, sizes: readonly number[]): CredentialRun[] {
  const headers = new Set<string>();
  return sizes.flatMap((bytes) =>
    CREDENTIAL_VARIANTS.filter(([k]) => k === kind).flatMap(([, variant]): CredentialRun[] => {
      const on: CredentialRun = {
        run: "on",
        variant,
        bytes,
        name: credentialsName(kind, variant, bytes),
      };
      const baseline = baselineOf(kind, variant);
      const name = headerName(kind, baseline, bytes);
      if (headers.has(name)) return [on];
      headers.add(name);
      return [on, { run: "header", variant, baseline, bytes, name }];
    }),
  );
}

/** How a baseline is named in the table: "nginx alone, upstream connections kept". */
export const baselineLabel = (kind: PlaneKind, baseline: Baseline) =>
  `${kind} alone${baseline === "alone-pooled" ? ", upstream connections kept" : ""}`;

/** The proxy's hop label, from PROXIES. */
export const labelOf = (kind: PlaneKind) => ALL_PROXIES.find((p) => p.kind === kind)!.label;

/** The proxy's zero-hop label, from PROXIES. */
export const zeroHopLabelOf = (kind: PlaneKind) =>
  ALL_PROXIES.find((p) => p.kind === kind)!.zeroHopLabel;

/** The proxy's name, from PROXIES. */
export const nameOf = (kind: PlaneKind) => ALL_PROXIES.find((p) => p.kind === kind)!.name;

const VERSION_ARGS: Record<PlaneKind, string[]> = {
  nginx: ["-v"],
  caddy: ["version"],
  haproxy: ["-v"],
};

/** The first line the program prints about its version ("nginx version: nginx/1.22.1"). */
export function planeVersion(kind: PlaneKind, binary: string): string {
  const r = spawnSync(binary, VERSION_ARGS[kind], { encoding: "utf8" });
  const line = `${r.stdout}${r.stderr}`.trim().split("\n")[0] ?? "unknown";
  // Caddy prints its bare version number.
  return kind === "caddy" ? `caddy ${line}` : line;
}
