/** Runs `fn` repeatedly for about `ms` milliseconds (at least `minRuns` times); returns per-run times in ms. */
export function sample(fn: () => unknown, ms: number, minRuns = 5): number[] {
  const times: number[] = [];
  const end = performance.now() + ms;
  while (times.length < minRuns || performance.now() < end) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return times;
}

export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export const median = (values: readonly number[]) => quantile(values, 0.5);

/** One row of the printed table. */
export interface Row {
  readonly bench: string;
  readonly figure: string;
  readonly baseline: string;
  readonly ratio: string;
  readonly target: string;
  readonly met: string;
}

export function fmt(n: number, digits = 2): string {
  if (!Number.isFinite(n)) return String(n);
  return n >= 100 ? n.toFixed(0) : n.toFixed(digits);
}

export function printTable(rows: readonly Row[]): void {
  const head = ["bench", "figure", "baseline (same run)", "ratio", "target", "met"];
  console.log(`| ${head.join(" | ")} |`);
  console.log(`|${head.map(() => "---").join("|")}|`);
  for (const r of rows)
    console.log(`| ${[r.bench, r.figure, r.baseline, r.ratio, r.target, r.met].join(" | ")} |`);
}

export const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
