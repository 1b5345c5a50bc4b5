// The proxies the data-plane suite measures, the two ways it runs each, and how they are named
// in the table, the saved JSON and the charts.

import { spawnSync } from "node:child_process";
import type { PlaneKind } from "../../test/support/data-plane.ts";

/** Each proxy: its name, and its name with its shipped configuration's mechanism. */
export const PROXIES: readonly {
  readonly kind: PlaneKind;
  readonly name: string;
  readonly label: string;
}[] = [
  { kind: "nginx", name: "nginx", label: "nginx auth_request" },
  { kind: "caddy", name: "Caddy", label: "Caddy forward_auth" },
  { kind: "haproxy", name: "HAProxy", label: "HAProxy Lua httpclient" },
];

/** `alone`: the proxy routing every host to the upstream; `hop`: shipped, asking the sidecar. */
export type Variant = "alone" | "hop";

/** The measured server's name: "nginx alone", "nginx hop". */
export const variantName = (kind: PlaneKind, variant: Variant) => `${kind} ${variant}`;

/** The proxy's label, from PROXIES. */
export const labelOf = (kind: PlaneKind) => PROXIES.find((p) => p.kind === kind)!.label;

/** The proxy's name, from PROXIES. */
export const nameOf = (kind: PlaneKind) => PROXIES.find((p) => p.kind === kind)!.name;

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
