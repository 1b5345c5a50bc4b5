/**
 * How fast envtest answers big lists: seeds N Secrets with 1 KiB values, then times one list and a
 * cold start of C clients listing at once (clients in a worker thread), with the server's peak RSS.
 *
 *   npx node packages/envtest/bench/list-throughput.ts [--secrets 50000] [--clients 50]
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { startEnvtest } from "../src/index.ts";
import type { ListJob, ListTiming } from "./list-clients.ts";

const { values } = parseArgs({
  options: {
    secrets: { type: "string", default: "50000" },
    clients: { type: "string", default: "50" },
    query: { type: "string", default: "" },
  },
});
const secrets = Number(values.secrets);
const clients = Number(values.clients);
const MiB = 1024 * 1024;

function runClients(job: ListJob): Promise<ListTiming[]> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL("./list-clients.ts", import.meta.url), { workerData: job });
    w.once("message", (m: ListTiming[]) => {
      resolve(m);
      void w.terminate();
    });
    w.once("error", reject);
  });
}

/** Samples this process's RSS while `f` runs; returns its result and the peak. */
async function peakRss<T>(f: () => Promise<T>): Promise<{ value: T; peakMiB: number }> {
  let peak = process.memoryUsage.rss();
  const t = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  try {
    const value = await f();
    return { value, peakMiB: peak / MiB };
  } finally {
    clearInterval(t);
  }
}

const env = await startEnvtest({ historySize: 10 });
const seedStart = performance.now();
for (let i = 0; i < secrets; i++) {
  env.apply({
    namespace: `tenant-${i % 50}`,
    name: `secret-${i}`,
    data: { value: randomBytes(1024) },
  });
}
const seeded = performance.now() - seedStart;
const url = `${env.url}/api/v1/secrets${values.query === "" ? "" : `?${values.query}`}`;
const job = (n: number): ListJob => ({ url, clients: n, headers: {} });
const rssBefore = process.memoryUsage.rss() / MiB;

const first = await peakRss(() => runClients(job(1)));
const second = await peakRss(() => runClients(job(1)));
const elu0 = performance.eventLoopUtilization();
const cold = await peakRss(() => runClients(job(clients)));
const elu = performance.eventLoopUtilization(elu0);
const all = cold.value;
const slowest = Math.max(...all.map((t) => t.ms));
const total = all.reduce((s, t) => s + t.bytes, 0);
const fmt = (n: number) => n.toFixed(0);
console.log(
  [
    `envtest list throughput: ${secrets} Secrets of 1 KiB (seeded in ${fmt(seeded)} ms), RSS ${fmt(rssBefore)} MiB`,
    `  one list, first:  ${fmt(first.value[0]?.ms ?? 0)} ms, ${((first.value[0]?.bytes ?? 0) / MiB).toFixed(1)} MiB, peak RSS ${fmt(first.peakMiB)} MiB`,
    `  one list, again:  ${fmt(second.value[0]?.ms ?? 0)} ms, peak RSS ${fmt(second.peakMiB)} MiB`,
    `  ${clients} clients at once: slowest ${fmt(slowest)} ms, ${(total / MiB).toFixed(0)} MiB sent (${((total / MiB / slowest) * 1000).toFixed(0)} MiB/s), peak RSS ${fmt(cold.peakMiB)} MiB, server event loop ${(elu.utilization * 100).toFixed(0)}% busy, statuses ${[...new Set(all.map((t) => t.status))].join(",")}`,
  ].join("\n"),
);
await env.close();
