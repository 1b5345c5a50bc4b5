// Throughput of `/v1/route` against a bare Fastify handler answering 200 with the same three
// headers (target: at least 90%). A measurement, not a test: vitest only runs `*.test.ts`.
//
//   node test/http/route-throughput.manual.ts [--pairs=12] [--duration=2] [--apps=10000]
//
// Both servers and the load generator run in their own processes and stay up; the load generator
// (autocannon, 10 connections) then hits one server and the other in turn, `pairs` times, the
// order swapped every pair. On a shared two-core machine a neighbour's build moves throughput by
// tens of percent from one second to the next, so only runs made back to back are compared:
// the figure is the median of the per-pair ratios. Server CPU per request is reported too.

import { type ChildProcess, fork } from "node:child_process";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import pino from "pino";
import { registryDocument, secretsFor } from "../../bench/fixtures.ts";
import { createDataServer } from "../../src/http/data-server.ts";
import { createMetrics } from "../../src/http/metrics.ts";
import { parseRegistryDocument } from "../../src/registry/parse.ts";
import { build } from "../../src/snapshot/build.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";

type Variant = "bare" | "mirror";

interface LoadResult {
  readonly rps: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
}

// The subset of autocannon's programmatic API used here (the package ships no types).
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: { method: string; path: string; headers: Record<string, string> }[];
}) => Promise<{
  requests: { total: number; average: number };
  non2xx: number;
  errors: number;
}>;

const flag = (name: string, fallback: number) => {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`));
  return raw === undefined ? fallback : Number(raw.slice(name.length + 3));
};

/** Hostnames of `registryDocument(apps)`: exact names, and a name under every tenth App's wildcard. */
function hostsFor(apps: number): string[] {
  const hosts: string[] = [];
  for (let i = 0; i < apps; i++) {
    hosts.push(`app-${i}.example.com`);
    if (i % 10 === 0) hosts.push(`w${i}.app-${i}.example.com`);
  }
  return hosts;
}

/** Child: one server; answers "cpu" with the CPU time used since the previous "cpu". */
async function serve(variant: Variant, apps: number): Promise<void> {
  let app: FastifyInstance;
  if (variant === "bare") {
    app = Fastify();
    app.get("/v1/route", (_request, reply) => {
      reply
        .header("x-mirror-app", "app-1")
        .header("x-mirror-upstream", "http://app-1.tenant-1.svc.cluster.local:8080")
        .header("x-mirror-revision", "1")
        .send();
    });
  } else {
    const parsed = parseRegistryDocument(registryDocument(apps), "default");
    if (!parsed.ok) throw new Error(parsed.error.message);
    const holder = new SnapshotHolder();
    holder.swap(
      build(parsed.value, secretsFor(apps), {
        revision: 1,
        builtAt: Date.now(),
        registry: { present: true, resourceVersion: "1", error: null },
      }),
    );
    // As `serve` runs it: an info-level logger (to /dev/null here) and metrics.
    const logger = pino({ level: "info" }, pino.destination("/dev/null"));
    app = createDataServer({ holder, logger, metrics: createMetrics() });
  }
  await app.listen({ host: "127.0.0.1", port: 0 });
  let cpu = process.cpuUsage();
  process.on("message", () => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    process.send?.(used.user + used.system);
  });
  process.send?.((app.server.address() as AddressInfo).port);
}

/** Child: the load generator; answers each `{port, seconds}` with a LoadResult. */
async function load(apps: number): Promise<void> {
  const specifier: string = "autocannon";
  const autocannon = ((await import(specifier)) as { default: Autocannon }).default;
  // A fixed random sample, cycled by every connection: a request rebuilt per call
  // (autocannon's setupRequest) would make the load generator the bottleneck.
  const hosts = hostsFor(apps);
  const sample = Array.from({ length: 2000 }, () => ({
    method: "GET",
    path: "/v1/route",
    headers: { host: hosts[Math.floor(Math.random() * hosts.length)]! },
  }));
  process.on("message", async (m: { port: number; seconds: number }) => {
    const r = await autocannon({
      url: `http://127.0.0.1:${m.port}`,
      connections: 10,
      duration: m.seconds,
      requests: sample,
    });
    const out: LoadResult = {
      rps: r.requests.total / m.seconds,
      requests: r.requests.total,
      non2xx: r.non2xx,
      errors: r.errors,
    };
    process.send?.(out);
  });
  process.send?.("ready");
}

function child(args: string[]): ChildProcess {
  return fork(new URL(import.meta.url).pathname, args, {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

function ask<T>(proc: ChildProcess, message?: object | string): Promise<T> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`child exited with ${code}`));
    proc.once("exit", exited);
    proc.once("message", (m) => {
      proc.off("exit", exited);
      resolve(m as T);
    });
    if (message !== undefined) proc.send(message);
  });
}

async function main(): Promise<void> {
  const pairs = flag("pairs", 12);
  const seconds = flag("duration", 2);
  const apps = flag("apps", 10_000);
  const servers = {
    bare: child(["serve", "bare", String(apps)]),
    mirror: child(["serve", "mirror", String(apps)]),
  };
  const ports = {
    bare: await ask<number>(servers.bare),
    mirror: await ask<number>(servers.mirror),
  };
  const loader = child(["load", String(apps)]);
  await ask(loader);

  const run = async (variant: Variant, s: number) => {
    await ask<number>(servers[variant], "cpu");
    const r = await ask<LoadResult>(loader, { port: ports[variant], seconds: s });
    const cpu = await ask<number>(servers[variant], "cpu");
    if (r.non2xx !== 0 || r.errors !== 0) {
      throw new Error(`${variant}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    }
    return { rps: r.rps, cpuPerRequest: cpu / r.requests };
  };
  // Warm-up: JIT, connections, the first GCs of the large Snapshot.
  await run("bare", 2);
  await run("mirror", 2);

  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const rps: Record<Variant, number[]> = { bare: [], mirror: [] };
  for (let i = 0; i < pairs; i++) {
    const order: Variant[] = i % 2 === 0 ? ["bare", "mirror"] : ["mirror", "bare"];
    const r: Partial<Record<Variant, Awaited<ReturnType<typeof run>>>> = {};
    for (const v of order) r[v] = await run(v, seconds);
    const { bare, mirror } = r as Record<Variant, Awaited<ReturnType<typeof run>>>;
    ratios.push(mirror.rps / bare.rps);
    cpuRatios.push(bare.cpuPerRequest / mirror.cpuPerRequest);
    rps.bare.push(bare.rps);
    rps.mirror.push(mirror.rps);
    console.log(
      `pair ${String(i + 1).padStart(2)}: bare ${bare.rps.toFixed(0).padStart(6)} req/s ${bare.cpuPerRequest.toFixed(1)} µs CPU/req | ` +
        `mirror ${mirror.rps.toFixed(0).padStart(6)} req/s ${mirror.cpuPerRequest.toFixed(1)} µs CPU/req | ratio ${pct(mirror.rps / bare.rps)}`,
    );
  }
  for (const p of [...Object.values(servers), loader]) p.kill();

  console.log(
    `\nmedian req/s: bare ${median(rps.bare).toFixed(0)}, mirror ${median(rps.mirror).toFixed(0)}; ` +
      `best: bare ${Math.max(...rps.bare).toFixed(0)}, mirror ${Math.max(...rps.mirror).toFixed(0)}`,
  );
  console.log(
    `throughput ratio, median of ${pairs} pairs: ${pct(median(ratios))} ` +
      `(quartiles ${pct(quantile(ratios, 0.25))}..${pct(quantile(ratios, 0.75))}); ` +
      `CPU-per-request ratio (bare/mirror), median: ${pct(median(cpuRatios))}`,
  );
}

function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const median = (xs: readonly number[]) => quantile(xs, 0.5);
const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

const [mode, a, b] = process.argv.slice(2);
if (mode === "serve") await serve(a as Variant, Number(b));
else if (mode === "load") await load(Number(a));
else await main();
