// `node bench/fleet/throttled-restart/main.ts [flags]` (npm run fleet:throttled-restart): issue 45
// item 5's fleet (12 replicas, 3,000 Secrets, 500 Apps) through an API-server restart losing its
// watch history and 8 s of every list answered 429 `Retry-After: 3` (scenario.ts). Builds dist/
// first (unless `--artifact=src`), prints one row per replica and writes
// bench/results/fleet-throttled-restart.json (or `--out`).

import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { z } from "zod";
import { gitCommit } from "../../machine.ts";
import { throttledRestart } from "./scenario.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);

const int = (min: number) => z.coerce.number().int().min(min);
const schema = z.object({
  replicas: int(1).default(12),
  apps: int(1).default(500),
  secrets: int(2).default(3_000),
  "value-bytes": int(1).default(1024),
  "closing-ms": int(0).default(0),
  "down-ms": int(0).default(1_000),
  "throttle-seconds": int(1).default(8),
  "retry-after": int(1).default(3),
  "watch-list": z.enum(["true", "false"]).default("true"),
  "converge-timeout": int(1).default(30),
  artifact: z.enum(["dist", "src"]).default("dist"),
  /** `false`: run the dist/ already built (a build of another commit, for a before/after). */
  build: z.enum(["true", "false"]).default("true"),
  "throttle-watches": z.enum(["true", "false"]).default("false"),
  out: z.string().default(`${ROOT}bench/results/fleet-throttled-restart.json`),
});

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: Object.fromEntries(Object.keys(schema.shape).map((k) => [k, { type: "string" }])),
  strict: true,
});
const parsed = schema.safeParse(values);
if (!parsed.success) {
  log(parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("\n"));
  process.exit(2);
}
const a = parsed.data;
if (a.secrets < a.apps + 1) {
  log(`--secrets: at least apps + 1 (${a.apps + 1})`);
  process.exit(2);
}
const config = {
  replicas: a.replicas,
  apps: a.apps,
  secrets: a.secrets,
  valueBytes: a["value-bytes"],
  closingMs: a["closing-ms"],
  downMs: a["down-ms"],
  throttleSeconds: a["throttle-seconds"],
  retryAfterSeconds: a["retry-after"],
  watchList: a["watch-list"] === "true",
  throttleWatches: a["throttle-watches"] === "true",
  convergeTimeoutSeconds: a["converge-timeout"],
  artifact: a.artifact,
};

const started = Date.now();
const commit = gitCommit();
if (config.artifact === "dist" && a.build === "true") {
  log("building dist/main.mjs (npm run build)");
  execFileSync(process.execPath, ["scripts/build.ts"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
}
const result = await throttledRestart(config, log);
const runSeconds = (Date.now() - started) / 1000;

const s = (ms: number | null) => (ms === null ? "none" : (ms / 1000).toFixed(2));
const rows = [
  [
    "replica",
    "first good list (s)",
    "Registry listed (s)",
    "emptied Secret seen (s)",
    "429s",
    "410s",
    "shortest retry (s)",
    "last 429 -> next list (s)",
    "met",
  ],
  ...result.replicas.map((r) => [
    r.client,
    s(r.firstGoodListMs),
    s(r.registryListedMs),
    s(r.emptiedSeenMs),
    String(r.throttled),
    String(r.expired),
    s(r.shortestRetryMs),
    s(r.afterLastRefusalMs),
    r.met ? "yes" : "NO",
  ]),
];
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
const table = [
  line(rows[0]!),
  `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
  ...rows.slice(1).map(line),
];
const { restart } = result;
process.stdout.write(
  [
    `Times in seconds after the throttling ended (${new Date(restart.throttledUntil).toISOString()}); goal R + 2 = ${result.goalMs / 1000} s.`,
    `${config.closingMs > 0 ? `Shutting down ${config.closingMs} ms (watches ended at once), ` : ""}Down ${restart.upAt - restart.downAt - config.closingMs} ms, then ${config.throttleSeconds} s of lists answered 429 Retry-After: ${config.retryAfterSeconds}; Secret emptied ${restart.emptiedAt - restart.throttledUntil} ms after the end.`,
    ...table,
    `${result.met ? "met" : "NOT met"}: ${result.replicas.filter((r) => r.met).length} of ${result.replicas.length} replicas within ${result.goalMs / 1000} s; run ${runSeconds.toFixed(0)} s`,
    "",
  ].join("\n"),
);
await writeFile(
  a.out,
  `${JSON.stringify(
    {
      scenario: "throttled-restart",
      commit,
      startedAt: new Date(started).toISOString(),
      machine: `${os.cpus().length}x ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
      config,
      runSeconds,
      ...result,
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${a.out}`);
process.exit(result.met ? 0 : 1);
