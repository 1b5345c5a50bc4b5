// `npm run fleet -- [flags]` (see options.ts): builds the production artifact, runs the fleet
// scenarios against one envtest, writes bench/fleet/results/<scenario>-<label>.json and prints
// the tables. `--report` renders, from the results of `--label` (default: latest) instead, the
// targets table (printed) and every phase's table into bench/results/fleet.md, and the charts.

import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { renderCharts } from "./charts.ts";
import { parseFleetArgs } from "./options.ts";
import { renderReport, renderTargets } from "./report.ts";
import { runSuite } from "./suite.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);

const config = parseFleetArgs(process.argv.slice(2));
if (typeof config === "string") {
  log(config);
  process.exit(process.argv.includes("--help") ? 0 : 2);
}
if (config.reportOnly) {
  const labels = [config.label];
  const intro =
    "# Fleet: every phase\n\nThe tables of the latest `npm run fleet`, written by " +
    '`npm run fleet -- --report` (BENCHMARKS.md, "Fleet", has the method).\n\n';
  const targets = await renderTargets(config.label);
  const report = await renderReport(labels);
  await writeFile(
    `${ROOT}bench/results/fleet.md`,
    `${intro}## Targets\n\n${targets}\n## Phases\n${report}`.replaceAll("](docs/", "](../../docs/"),
  );
  log("wrote bench/results/fleet.md");
  process.stdout.write(targets);
  for (const path of await renderCharts(labels)) log(`chart ${path}`);
  process.exit(0);
}
const started = Date.now();
if (config.artifact === "dist") {
  log("building dist/main.mjs (npm run build)");
  execFileSync(process.execPath, ["scripts/build.ts"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
}
await runSuite(config, log);
process.stdout.write(await renderReport([config.label]));
log(`fleet suite (${config.label}) done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(0);
