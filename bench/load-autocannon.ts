// Child process: autocannon, the fallback load generator when wrk is not installed. Answers each
// `{port, seconds, connections, hostsFile}` with a LoadResult. Its latency histogram has a
// resolution of 1 ms, so its p50/p99 are coarse; wrk's are in microseconds.

import { readFileSync } from "node:fs";
import type { LoadResult, LoadRun } from "./load.ts";

// The subset of autocannon's programmatic API used here (the package ships no types).
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: { method: string; path: string; headers: Record<string, string> }[];
}) => Promise<{
  requests: { total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}>;

const specifier: string = "autocannon";
const autocannon = ((await import(specifier)) as { default: Autocannon }).default;

process.on("message", async (run: LoadRun) => {
  // A fixed sample cycled by every connection: a request built per call (setupRequest) would make
  // the load generator the bottleneck.
  const requests = readFileSync(run.hostsFile, "utf8")
    .split("\n")
    .filter((h) => h !== "")
    .map((host) => ({ method: "GET", path: run.path, headers: { host } }));
  const r = await autocannon({
    url: `http://127.0.0.1:${run.port}`,
    connections: run.connections,
    duration: run.seconds,
    requests,
  });
  const out: LoadResult = {
    requests: r.requests.total,
    seconds: run.seconds,
    failures: r.non2xx + r.errors + r.timeouts,
    p50Us: r.latency.p50 * 1000,
    p99Us: r.latency.p99 * 1000,
  };
  process.send?.(out);
});
process.on("disconnect", () => process.exit(0));
process.send?.("ready");
