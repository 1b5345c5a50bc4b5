import { execFile, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ask, forkChild, stopChild } from "./child.ts";
import { answersFor, hostsFor, seededRandom } from "./fixtures.ts";

/** One load run: fixed connections and duration, hosts cycled from a file (one per line). */
export interface LoadRun {
  readonly port: number;
  readonly path: string;
  readonly seconds: number;
  readonly connections: number;
  readonly hostsFile: string;
  /** Default `http`; `https` for a TLS listener (wrk sends no SNI name but the address). */
  readonly scheme?: "http" | "https";
}

export interface LoadResult {
  readonly requests: number;
  readonly seconds: number;
  /** Non-2xx answers, socket errors and timeouts: any of them makes the run invalid. */
  readonly failures: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

/** A load generator in its own process: wrk when installed, else autocannon in a Node child. */
export interface LoadGenerator {
  readonly name: string;
  run(run: LoadRun): Promise<LoadResult>;
  close(): Promise<void>;
}

// wrk's Lua hooks: requests pre-formatted from the hosts file (one per line), and a JSON summary
// with exact percentiles (microseconds) printed when the run ends.
const WRK_SCRIPT = `
local reqs, n, i = {}, 0, 0
function init(args)
  for line in io.lines(args[1]) do
    n = n + 1
    reqs[n] = wrk.format("GET", args[2], { Host = line })
  end
end
function request()
  i = i % n + 1
  return reqs[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"us":%d,"failures":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

export async function startLoadGenerator(): Promise<LoadGenerator> {
  if (spawnSync("wrk", ["--version"]).error === undefined) return wrk();
  const child = forkChild("./load-autocannon.ts", []);
  await ask(child);
  return {
    name: "autocannon 9 (1 process; latency resolution 1 ms)",
    run: (run) => ask<LoadResult>(child, run, (run.seconds + 30) * 1000),
    close: () => stopChild(child),
  };
}

function wrk(): LoadGenerator {
  const script = join(tmpdir(), `replica-mirror-bench-${process.pid}.lua`);
  writeFileSync(script, WRK_SCRIPT);
  return {
    name: "wrk (1 thread)",
    run: (run) =>
      new Promise((resolve, reject) => {
        const args = ["-t1", `-c${run.connections}`, `-d${run.seconds}s`, "-s", script];
        args.push(`${run.scheme ?? "http"}://127.0.0.1:${run.port}`, "--", run.hostsFile, run.path);
        execFile("wrk", args, { timeout: (run.seconds + 30) * 1000 }, (error, stdout) => {
          if (error !== null) return reject(error);
          const line = stdout.split("\n").find((l) => l.startsWith('{"requests"'));
          if (line === undefined) return reject(new Error(`wrk printed no summary: ${stdout}`));
          const s = JSON.parse(line) as Record<string, number>;
          resolve({
            requests: s.requests!,
            seconds: s.us! / 1e6,
            failures: s.failures!,
            p50Us: s.p50!,
            p99Us: s.p99!,
          });
        });
      }),
    close: async () => {},
  };
}

/** Writes `answersFor(apps)` as JSON for the per-host baseline; returns the file. */
export function writeAnswersFile(apps: number): string {
  const file = join(tmpdir(), `replica-mirror-bench-answers-${process.pid}-${apps}.json`);
  writeFileSync(file, JSON.stringify(answersFor(apps)));
  return file;
}

/** Writes `count` hosts drawn (seeded) from the bench Registry of `apps` Apps; returns the file. */
export function writeHostsFile(apps: number, count = 2000, seed = 7): string {
  const random = seededRandom(seed);
  const all = hostsFor(apps);
  const file = join(tmpdir(), `replica-mirror-bench-hosts-${process.pid}-${apps}.txt`);
  const hosts = Array.from({ length: count }, () => all[Math.floor(random() * all.length)]);
  writeFileSync(file, `${hosts.join("\n")}\n`);
  return file;
}
