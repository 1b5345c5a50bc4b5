import {
  BASELINE_LABEL,
  BASELINES,
  type BaselineKind,
  PER_HOST,
  startBaseline,
} from "./baselines.ts";
import { freePorts } from "./child.ts";
import { startCluster } from "./cluster.ts";
import { waitForStatus } from "./http-probe.ts";
import { startLoadGenerator, writeAnswersFile, writeHostsFile } from "./load.ts";
import { fmt, median, type Row } from "./measure.ts";
import { alternate, medianRatio, type RunResult } from "./rounds.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";
import { startSynced } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const APPS = 10_000;
const SHIPPED = "replica-mirror";
const DIAGNOSTIC = "the data thread alone (diagnostic)";

/**
 * `/v1/route` of the shipped artifact (synced against envtest with 10k Apps, gzip Registry, a
 * distinct 1 KiB Secret each) under wrk with random hosts of the Registry, at 10 and 32
 * connections, against the baselines and the data thread alone (a diagnostic row), alternating.
 */
export async function benchRoute(ctx: SuiteContext): Promise<SuiteOutput> {
  // An odd number of rounds: the median of the per-round ratios is then one round's ratio, not
  // the lower of the two middle ones (`quantile`). Shorter rounds, more of them: on a shared
  // machine a ratio moves by tens of percent from one round to the next.
  const rounds = ctx.quick ? 1 : 9;
  const seconds = ctx.quick ? 1 : 3;
  const cluster = await startCluster(APPS);
  const servers: ServerProcess[] = [];
  const load = await startLoadGenerator();
  try {
    servers.push((await startSynced(cluster, { env: ctx.env })).server);
    for (const kind of BASELINES)
      servers.push(await startBaseline(kind, { nodeFlags: ctx.nodeFlags, env: ctx.env }));
    servers.push(
      await startBaseline(PER_HOST, {
        nodeFlags: ctx.nodeFlags,
        env: ctx.env,
        args: [writeAnswersFile(APPS)],
      }),
    );
    servers.push(await startDiagnostic(ctx));
    for (const s of servers.slice(1)) await waitForStatus(s.opsPort, "/readyz", 200, 60_000);
    const hostsFile = writeHostsFile(APPS);
    const rows: Row[] = [];
    const data: Record<string, Record<string, RunResult[]>> = {};
    for (const connections of [10, 32]) {
      const runs = await alternate(servers, { load, rounds, seconds, connections, hostsFile });
      data[`c${connections}`] = Object.fromEntries(runs);
      rows.push(
        ...routeRows(
          runs,
          `${load.name}, ${connections} connections, ${rounds} rounds x ${seconds} s`,
        ),
      );
    }
    return { rows, data: { apps: APPS, rounds, seconds, load: load.name, runs: data } };
  } finally {
    await load.close();
    await Promise.all(servers.map((s) => s.stop()));
    await cluster.close();
  }
}

async function startDiagnostic(ctx: SuiteContext): Promise<ServerProcess> {
  const [port, opsPort] = (await freePorts(2)) as [number, number];
  const script = new URL("./route-server.ts", import.meta.url).pathname;
  return startServerProcess({
    name: DIAGNOSTIC,
    args: [...ctx.nodeFlags, script, String(port), String(opsPort), String(APPS)],
    env: ctx.env,
    dataPort: port,
    opsPort,
  });
}

function routeRows(runs: Map<string, RunResult[]>, setup: string): Row[] {
  const of = (name: string) => runs.get(name)!;
  const m = (name: string, f: (r: RunResult) => number) => median(of(name).map(f));
  const fastify = BASELINE_LABEL.fastify;
  const label = (k: BaselineKind) => BASELINE_LABEL[k];
  const baselines = (f: (r: RunResult) => number, digits: number, unit: string) =>
    [...BASELINES.map(label), label(PER_HOST), DIAGNOSTIC]
      .map((n) => `${n} ${fmt(m(n, f), digits)}${unit}`)
      .join("; ");
  const rps = (r: RunResult) => r.rps;
  const cpu = (r: RunResult) => r.cpuPerRequestUs;
  const rpsRatio = medianRatio(of(SHIPPED), of(fastify), rps);
  const cpuRatio = medianRatio(of(SHIPPED), of(fastify), cpu);
  const diagRatio = medianRatio(of(DIAGNOSTIC), of(fastify), rps);
  const perHost = label(PER_HOST);
  return [
    {
      bench: `/v1/route req/s, shipped process, 10k Apps, random hosts (${setup})`,
      figure: `${fmt(m(SHIPPED, rps), 0)} req/s`,
      baseline: baselines(rps, 0, ""),
      ratio: `${fmt(rpsRatio, 2)}x fastify, ${fmt(medianRatio(of(SHIPPED), of(label("http")), rps), 2)}x node:http`,
      target: ">= 0.90x fastify (goal 0.95x)",
      met: rpsRatio >= 0.9 ? "yes" : "no",
    },
    {
      bench: "server CPU per request, shipped process (same runs)",
      figure: `${fmt(m(SHIPPED, cpu), 1)} µs`,
      baseline: baselines(cpu, 1, " µs"),
      ratio: `${fmt(cpuRatio, 2)}x fastify`,
      target: "reported",
      met: "-",
    },
    {
      bench: `/v1/route against ${perHost} (a Map lookup of each host, the sidecar's answers; same runs)`,
      figure: `${fmt(medianRatio(of(SHIPPED), of(perHost), rps), 2)}x req/s, ${fmt(medianRatio(of(SHIPPED), of(perHost), cpu), 2)}x CPU per request`,
      baseline: `${perHost} ${fmt(m(perHost, rps), 0)} req/s, ${fmt(m(perHost, cpu), 1)} µs; it runs at ${fmt(medianRatio(of(perHost), of(fastify), rps), 2)}x / ${fmt(medianRatio(of(perHost), of(fastify), cpu), 2)}x ${fastify}`,
      ratio: "-",
      target: "reported",
      met: "-",
    },
    {
      bench: "latency p50 / p99, shipped process (same runs)",
      figure: `${fmt(
        m(SHIPPED, (r) => r.p50Us),
        0,
      )} / ${fmt(
        m(SHIPPED, (r) => r.p99Us),
        0,
      )} µs`,
      baseline: `${fastify} ${fmt(
        m(fastify, (r) => r.p50Us),
        0,
      )} / ${fmt(
        m(fastify, (r) => r.p99Us),
        0,
      )} µs`,
      ratio: `p50 ${fmt(
        medianRatio(of(SHIPPED), of(fastify), (r) => r.p50Us),
        2,
      )}x fastify`,
      target: "-",
      met: "-",
    },
    {
      bench: "diagnostic: the data thread alone, req/s (same runs)",
      figure: `${fmt(m(DIAGNOSTIC, rps), 0)} req/s`,
      baseline: `${fastify} ${fmt(m(fastify, rps), 0)}`,
      ratio: `${fmt(diagRatio, 2)}x fastify`,
      target: "-",
      met: "-",
    },
  ];
}
