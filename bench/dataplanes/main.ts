// `npm run bench:dataplanes`: what a user's data plane pays for the sidecar, every real proxy in
// one run (see suite.ts); `--quick` for a smoke run of about two minutes, `--no-wait` to skip
// waiting for a quiet machine, `--only=PART,...` for some parts (suite.ts PARTS). Prints the
// table, saves bench/results/dataplanes[.quick].json, and renders the charts from it (a quick run
// only when no full run was saved).

import { LoadSampler, load1, machineLine, waitForQuiet } from "../machine.ts";
import { fmt, printTable } from "../measure.ts";
import { loadResult, saveResult } from "../results.ts";
import { ensureBuilt, shippedCommand } from "../shipped.ts";
import { renderDataplaneCharts } from "./charts.ts";
import { CREDENTIAL_BYTES } from "./credentials.ts";
import { type DataplanesData, writesOf } from "./data.ts";
import { rotationLines } from "./report-rotation.ts";
import { benchDataplanes, defaultParts, PARTS, type Part } from "./suite.ts";
import { renderTlsChart } from "./tls-chart.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const noWait = argv.includes("--no-wait");
// `--only=load-10k,rotations`: some parts. A run with it or --credential-bytes is saved apart
// (dataplanes-partial.json) and never charted.
const only = argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
const parts = only === undefined ? defaultParts(quick) : new Set(only.split(",") as Part[]);
const unknown = [...parts].filter((p) => !PARTS.includes(p));
if (unknown.length > 0) {
  console.error(`--only: unknown part ${unknown.join(", ")} (parts: ${PARTS.join(", ")})`);
  process.exit(2);
}
// `--credential-bytes=N,...`: credentials of these sizes, on under load and rotated (default
// CREDENTIAL_BYTES).
const bytesFlag = argv.find((a) => a.startsWith("--credential-bytes="));
const credentialBytes =
  bytesFlag === undefined
    ? CREDENTIAL_BYTES
    : bytesFlag.slice("--credential-bytes=".length).split(",").map(Number);
if (credentialBytes.some((n) => !Number.isInteger(n) || n < 16 || n > 8192)) {
  console.error("--credential-bytes: integers from 16 to 8192, comma-separated");
  process.exit(2);
}

ensureBuilt();
const command = shippedCommand();
const ctx = {
  quick,
  nodeFlags: command.nodeFlags,
  // A diagnostic run's flags for the sidecars (`BENCH_SIDECAR_NODE_OPTIONS=--import=/x.mjs`): this
  // process's own NODE_OPTIONS never reach them.
  env: {
    ...command.env,
    ...(process.env.BENCH_SIDECAR_NODE_OPTIONS === undefined
      ? {}
      : { NODE_OPTIONS: process.env.BENCH_SIDECAR_NODE_OPTIONS }),
  },
};
// A full run waits (at most 3 minutes) for the neighbours to quieten; the load is recorded anyway.
const startLoad = quick || noWait ? load1() : await waitForQuiet(1.5, 180_000);
const partial = `${only === undefined ? "" : `, only ${[...parts].join(", ")}`}${bytesFlag === undefined ? "" : `, credentials of ${credentialBytes.join(", ")} B`}`;
console.log(
  `# replica-mirror data planes (${quick ? "quick" : "full"}${partial}) — ${new Date().toISOString()}, ${machineLine()}, load average ${fmt(startLoad, 2)} at start`,
);
const started = performance.now();
const sampler = new LoadSampler();
const at = new Date().toISOString();
const out = await benchDataplanes(ctx, parts, credentialBytes);
const load = sampler.stop();
const data = out.data as DataplanesData;
const suite = only === undefined && bytesFlag === undefined ? "dataplanes" : "dataplanes-partial";
const result = { suite, at, quick, machine: machineLine(), load, data };
saveResult(result);
console.log(`${Object.values(data.versions).join("; ")}; upstream: ${data.upstream}\n`);
printTable(out.rows);
for (const [apps, size] of Object.entries(data.sizes)) {
  const perRequest = Object.entries(size.upstreamConnectionsPerRequest)
    .map(([name, n]) => `${name} ${fmt(n, 3)}`)
    .join(", ");
  console.log(`\n${apps} Apps: upstream connections per request: ${perRequest}`);
  const tables = Object.entries(size.zeroHopTableMs ?? {})
    .map(([kind, ms]) => `${kind} ${fmt(ms, 0)} ms`)
    .join(", ");
  console.log(`${apps} Apps: zero-hop sidecar spawn until the proxy holds its table: ${tables}`);
  for (const [name, why] of Object.entries(size.credentialsLeftOut ?? {}))
    console.log(`${apps} Apps: ${name} left out: ${why}`);
}
for (const w of writesOf(data)) {
  const warmUp = Object.entries(w.warmUp)
    .map(([name, ms]) => `${name} ${ms.map((m) => fmt(m, 1)).join(", ")}`)
    .join("; ");
  const at = `${w.apps / 1000}k Apps`;
  if (warmUp !== "")
    console.log(`\nwrite → answer at ${at}, the untimed writes before (ms): ${warmUp}`);
}
for (const line of rotationLines(data.rotations ?? [])) console.log(line);
const stages = Object.entries(data.stageSeconds ?? {}).map(([name, s]) => `${name} ${s} s`);
console.log(
  `\n${stages.join("; ")}\n${((performance.now() - started) / 1000).toFixed(0)} s, load average ${fmt(load.min, 2)}–${fmt(load.max, 2)}`,
);
const full = loadResult<DataplanesData>("dataplanes");
const charted = suite !== "dataplanes" ? null : quick ? (full === null ? result : null) : result;
if (charted !== null)
  console.log(`docs/charts/: ${(await renderDataplaneCharts(charted)).join(", ")}`);
// The TLS chart from any run with a TLS part but a quick one (`--only=tls` included).
const tlsChart = quick ? null : await renderTlsChart(result);
if (tlsChart !== null) console.log(`docs/charts/: ${tlsChart}`);
process.exit(0);
