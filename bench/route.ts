import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ask, forkChild, stopChild } from "./child.ts";
import { hostsFor, seededRandom } from "./fixtures.ts";
import { type LoadResult, startLoadGenerator } from "./load.ts";
import { fmt, median, pct, type Row } from "./measure.ts";
import type { RouteServerKind } from "./route-server.ts";

const APPS = 10_000;
const CONNECTIONS = 10;
const KINDS: readonly RouteServerKind[] = ["mirror", "fastify", "http"];

/**
 * `/v1/route` with a 10k-App Registry and random hosts, against a bare Fastify handler and bare
 * node:http giving the same 200 and headers. Each server runs in its own process and the load
 * generator in another; every round runs each server once, back to back, in a rotating order,
 * and the figures are medians over rounds (ratios: median of the per-round ratios).
 */
export async function benchRoute(quick: boolean): Promise<Row[]> {
  const rounds = quick ? 3 : 10;
  const seconds = quick ? 1 : 3;
  const random = seededRandom(7);
  const all = hostsFor(APPS);
  const hostsFile = join(tmpdir(), `replica-mirror-bench-hosts-${process.pid}.txt`);
  writeFileSync(
    hostsFile,
    `${Array.from({ length: 2000 }, () => all[Math.floor(random() * all.length)]).join("\n")}\n`,
  );

  const servers = new Map(KINDS.map((k) => [k, forkChild("./route-server.ts", [k, String(APPS)])]));
  const load = await startLoadGenerator();
  try {
    const ports = new Map<RouteServerKind, number>();
    for (const [k, child] of servers) ports.set(k, await ask<number>(child));
    const once = async (kind: RouteServerKind, s: number) => {
      const child = servers.get(kind)!;
      await ask<number>(child, "cpu");
      const port = ports.get(kind)!;
      const r = await load.run({
        port,
        path: "/v1/route",
        seconds: s,
        connections: CONNECTIONS,
        hostsFile,
      });
      const cpuUs = await ask<number>(child, "cpu");
      if (r.failures > 0 || r.requests === 0)
        throw new Error(`${kind}: ${r.failures} failed requests of ${r.requests}`);
      return { ...r, rps: r.requests / r.seconds, cpuPerRequestUs: cpuUs / r.requests };
    };
    // Warm-up: JIT, connections, the first collections of the large Snapshot.
    for (const k of KINDS) await once(k, seconds);

    const runs = new Map<
      RouteServerKind,
      (LoadResult & { rps: number; cpuPerRequestUs: number })[]
    >(KINDS.map((k) => [k, []]));
    const ratioFastify: number[] = [];
    const ratioHttp: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = KINDS.map((_, i) => KINDS[(i + round) % KINDS.length]!);
      const r = new Map<RouteServerKind, Awaited<ReturnType<typeof once>>>();
      for (const k of order) r.set(k, await once(k, seconds));
      for (const [k, v] of r) runs.get(k)!.push(v);
      ratioFastify.push(r.get("mirror")!.rps / r.get("fastify")!.rps);
      ratioHttp.push(r.get("mirror")!.rps / r.get("http")!.rps);
    }
    const m = (k: RouteServerKind, f: (x: Awaited<ReturnType<typeof once>>) => number) =>
      median(runs.get(k)!.map(f));
    const setup = `${load.name}, ${CONNECTIONS} connections, ${rounds} rounds x ${seconds} s`;
    const ratio = median(ratioFastify);
    return [
      {
        bench: `/v1/route throughput, 10k Apps (gzip), random hosts (${setup})`,
        figure: `${fmt(
          m("mirror", (x) => x.rps),
          0,
        )} req/s`,
        baseline: `bare fastify ${fmt(
          m("fastify", (x) => x.rps),
          0,
        )}; bare node:http ${fmt(
          m("http", (x) => x.rps),
          0,
        )}`,
        ratio: `${pct(ratio)} of fastify, ${pct(median(ratioHttp))} of node:http`,
        target: ">= 90% of fastify",
        met: ratio >= 0.9 ? "yes" : "no",
      },
      {
        bench: "/v1/route latency p50 / p99 (same runs)",
        figure: `${fmt(
          m("mirror", (x) => x.p50Us),
          0,
        )} / ${fmt(
          m("mirror", (x) => x.p99Us),
          0,
        )} µs`,
        baseline: `fastify ${fmt(
          m("fastify", (x) => x.p50Us),
          0,
        )} / ${fmt(
          m("fastify", (x) => x.p99Us),
          0,
        )} µs; node:http ${fmt(
          m("http", (x) => x.p50Us),
          0,
        )} / ${fmt(
          m("http", (x) => x.p99Us),
          0,
        )} µs`,
        ratio: `p50 ${fmt(m("mirror", (x) => x.p50Us) / m("fastify", (x) => x.p50Us), 2)}x fastify`,
        target: "-",
        met: "-",
      },
      {
        bench: "/v1/route server CPU per request (same runs)",
        figure: `${fmt(
          m("mirror", (x) => x.cpuPerRequestUs),
          1,
        )} µs`,
        baseline: `fastify ${fmt(
          m("fastify", (x) => x.cpuPerRequestUs),
          1,
        )} µs; node:http ${fmt(
          m("http", (x) => x.cpuPerRequestUs),
          1,
        )} µs`,
        ratio: `${fmt(m("mirror", (x) => x.cpuPerRequestUs) / m("fastify", (x) => x.cpuPerRequestUs), 2)}x fastify`,
        target: "-",
        met: "-",
      },
    ];
  } finally {
    await load.close();
    await Promise.all([...servers.values()].map(stopChild));
  }
}
