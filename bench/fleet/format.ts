// How the report writes figures: counts with thousands separators, bytes in KiB/MiB/GiB, durations
// in seconds, shares in percent, spreads as min / median / max.

import type { Spread } from "./results.ts";

/** A count or a figure: integers grouped, others with up to `digits` decimals. */
export function num(n: number | null | undefined, digits = 2): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "–";
  if (Number.isInteger(n) || Math.abs(n) >= 1000) return Math.round(n).toLocaleString("en-US");
  return Number(n.toFixed(digits)).toString();
}

/** Bytes in the largest unit that keeps the figure at or above 1. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v.toFixed(0) : v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

/** Milliseconds as seconds. */
export function secs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  return `${(ms / 1000).toFixed(ms >= 100_000 ? 0 : 1)} s`;
}

/** A share in percent. */
export function pct(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return `${(x * 100).toFixed(0)}%`;
}

/** min / median / max, each written with `f`. */
export function spreadOf(s: Spread | null, f: (n: number) => string = (n) => num(n)): string {
  if (s === null) return "–";
  return `${f(s.min)} / ${f(s.median)} / ${f(s.max)}`;
}

/** A fact, written by what its name says it holds. */
export function fact(name: string, v: number | string | null): string {
  if (v === null) return "–";
  if (typeof v === "string") return v === "" ? "–" : v;
  if (name.includes("(bytes)") || name.startsWith("bytes")) return bytes(v);
  if (name.includes("(ms)")) return secs(v);
  if (name.endsWith("(×)")) return `${num(v)}×`;
  if (name.includes("share")) return pct(v);
  return num(v);
}
