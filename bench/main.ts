import { benchAmplification } from "./amplification.ts";
import { benchClientNode } from "./client-node-cost.ts";
import { closeSharedClusters } from "./cluster.ts";
import { benchCore } from "./core.ts";
import { benchDevices } from "./devices.ts";
import { benchIdle } from "./idle.ts";
import { LoadSampler, load1, machineLine, waitForQuiet } from "./machine.ts";
import { printTable, type Row } from "./measure.ts";
import { benchMemory } from "./memory.ts";
import { benchPropagation } from "./propagation.ts";
import { saveResult } from "./results.ts";
import { benchRoute } from "./route.ts";
import { ensureBuilt, shippedCommand } from "./shipped.ts";
import { benchStartup } from "./startup.ts";
import type { Suite, SuiteContext } from "./suite.ts";
import { benchWarmStart } from "./warm-start.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const only = argv
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",");
const noWait = argv.includes("--no-wait");
/** `--name=1,2,3`: positive integers, or undefined when the flag is absent. */
function numbers(name: string): readonly number[] | undefined {
  const flag = argv.find((a) => a.startsWith(`--${name}=`));
  if (flag === undefined) return undefined;
  const list = flag
    .slice(name.length + 3)
    .split(",")
    .map(Number);
  if (list.some((n) => !Number.isInteger(n) || n <= 0)) {
    console.error(`--${name}: a comma-separated list of positive integers`);
    process.exit(2);
  }
  return list;
}
const apps = numbers("apps");
const valueBytes = numbers("value-bytes");

const suites: Record<string, Suite> = {
  core: benchCore,
  route: benchRoute,
  startup: benchStartup,
  memory: benchMemory,
  idle: benchIdle,
  "client-node": benchClientNode,
  propagation: benchPropagation,
  amplification: benchAmplification,
  devices: benchDevices,
  "warm-start": benchWarmStart,
};

for (const name of only ?? []) {
  if (!(name in suites)) {
    console.error(`--only=${name}: no such suite (${Object.keys(suites).join(", ")})`);
    process.exit(2);
  }
}
ensureBuilt();
const command = shippedCommand();
const ctx: SuiteContext = {
  quick,
  ...(apps === undefined ? {} : { apps }),
  ...(valueBytes === undefined ? {} : { valueBytes }),
  nodeFlags: command.nodeFlags,
  env: command.env,
};
// A full run waits (at most 10 minutes) for the neighbours to quieten; the load is recorded anyway.
const startLoad = quick || noWait ? load1() : await waitForQuiet(1.5, 600_000);
console.log(
  `# replica-mirror benchmarks (${quick ? "quick" : "full"}) — ${new Date().toISOString()}, ${machineLine()}, load average ${startLoad.toFixed(2)} at start`,
);
console.log(`shipped: node ${[...command.nodeFlags, command.entry, ...command.args].join(" ")}\n`);
const started = performance.now();
const tables: { readonly name: string; readonly rows: readonly Row[] }[] = [];
for (const [name, run] of Object.entries(suites)) {
  if (only !== undefined && !only.includes(name)) continue;
  const t0 = performance.now();
  const sampler = new LoadSampler();
  const at = new Date().toISOString();
  const out = await run(ctx);
  const load = sampler.stop();
  tables.push({ name, rows: out.rows });
  // A run at sizes of its own is not the committed full result the charts are drawn from.
  const partial = quick || apps !== undefined || valueBytes !== undefined;
  saveResult({ suite: name, at, quick: partial, machine: machineLine(), load, data: out.data });
  console.error(
    `suite ${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s, load average ${load.min.toFixed(2)}–${load.max.toFixed(2)}`,
  );
}
await closeSharedClusters();
// One table per suite, each under its name: BENCHMARKS.md has the same sections.
for (const { name, rows } of tables) {
  console.log(`\n### ${name}\n`);
  printTable(rows);
}
const figures = tables.reduce((n, t) => n + t.rows.length, 0);
console.log(`\n${figures} figures in ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(0);
