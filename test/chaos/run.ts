/**
 * `npm run chaos -- --seeds N [--first-seed S] [--steps K] [--no-shrink]`: runs N seeds from S,
 * one line per seed and a summary; a failing seed is shrunk to the shortest operation prefix that
 * still fails, printed one operation per line. Exit status 1 when any seed failed.
 */
import { parseArgs } from "node:util";
import { generate } from "./generate.ts";
import { describeOp } from "./ops.ts";
import { DEFAULT_RUN_OPTIONS, type RunResult, runOps } from "./runner.ts";
import { shrink } from "./shrink.ts";

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "10" },
    "first-seed": { type: "string", default: "1" },
    steps: { type: "string", default: "40" },
    "no-shrink": { type: "boolean", default: false },
  },
});
const count = Number(values.seeds);
const first = Number(values["first-seed"]);
const steps = Number(values.steps);
for (const [name, v] of [
  ["--seeds", count],
  ["--first-seed", first],
  ["--steps", steps],
] as const) {
  if (!Number.isInteger(v) || v < 0) {
    console.error(`${name}: expected a whole number, got '${String(v)}'`);
    process.exit(2);
  }
}

const summarise = (r: RunResult): string =>
  `${r.stats.samples} samples, ${r.stats.quiescentPoints} quiescent points (slowest ${r.stats.maxConvergeMs} ms), ` +
  `skew ${r.stats.skew}, unfetched ${r.stats.unfetched}; ` +
  Object.entries(r.stats.events)
    .sort()
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");

const started = Date.now();
const failed: number[] = [];
for (let seed = first; seed < first + count; seed++) {
  const { initial, ops } = generate(seed, steps);
  const result = await runOps(seed, initial, ops, DEFAULT_RUN_OPTIONS);
  const secs = (result.ms / 1000).toFixed(1);
  if (result.ok) {
    console.log(`seed ${seed}: ok in ${secs} s (${summarise(result)})`);
    continue;
  }
  failed.push(seed);
  console.log(
    `seed ${seed}: FAILED in ${secs} s after ${result.opsApplied} of ${ops.length} operations`,
  );
  console.log(`  ${result.failure?.replaceAll("\n", "\n  ")}`);
  if (values["no-shrink"]) continue;
  const shortest = await shrink(seed, initial, ops.slice(0, result.opsApplied), (line) =>
    console.log(`  shrink: ${line}`),
  );
  console.log(
    `  seed ${seed}: shortest failing prefix: ${shortest.length} operations ` +
      `(replay: npm run chaos -- --seeds 1 --first-seed ${seed} --steps ${shortest.length} --no-shrink)`,
  );
  console.log("  initial writes:");
  for (const op of initial) console.log(`    ${describeOp(op)}`);
  console.log("  operations:");
  for (const [i, op] of shortest.entries())
    console.log(`    ${String(i + 1).padStart(3)}. ${describeOp(op)}`);
}
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(
  `${count} seeds from ${first} (${steps} steps): ${count - failed.length} passed, ${failed.length} failed` +
    `${failed.length > 0 ? ` (seeds ${failed.join(", ")})` : ""}; ${minutes} min`,
);
process.exit(failed.length > 0 ? 1 : 0);
