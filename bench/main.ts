import os from "node:os";
import { benchCore } from "./core.ts";
import { printTable, type Row } from "./measure.ts";

const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);

const suites: Record<string, (quick: boolean) => Row[] | Promise<Row[]>> = {
  core: benchCore,
};

console.log(
  `# replica-mirror benchmarks (${quick ? "quick" : "full"}) — ${new Date().toISOString()}, node ${process.version}, ${os.cpus().length}x ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB\n`,
);
const rows: Row[] = [];
for (const [name, run] of Object.entries(suites)) {
  if (only !== undefined && only !== name) continue;
  rows.push(...(await run(quick)));
}
printTable(rows);
