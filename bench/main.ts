import os from "node:os";
import { benchAmplification } from "./amplification.ts";
import { benchCore } from "./core.ts";
import { printTable, type Row } from "./measure.ts";
import { benchMemory } from "./memory.ts";
import { benchPropagation } from "./propagation.ts";
import { benchRoute } from "./route.ts";
import { benchStartup } from "./startup.ts";

const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);

const suites: Record<string, (quick: boolean) => Row[] | Promise<Row[]>> = {
  core: benchCore,
  route: benchRoute,
  propagation: benchPropagation,
  amplification: benchAmplification,
  startup: benchStartup,
  memory: benchMemory,
};

if (only !== undefined && !(only in suites)) {
  console.error(`--only=${only}: no such suite (${Object.keys(suites).join(", ")})`);
  process.exit(2);
}
console.log(
  `# replica-mirror benchmarks (${quick ? "quick" : "full"}) — ${new Date().toISOString()}, node ${process.version}, ${os.cpus().length}x ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB\n`,
);
const started = performance.now();
const rows: Row[] = [];
for (const [name, run] of Object.entries(suites)) {
  if (only !== undefined && only !== name) continue;
  const t0 = performance.now();
  rows.push(...(await run(quick)));
  console.error(`suite ${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
printTable(rows);
console.log(`\n${rows.length} figures in ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(0);
