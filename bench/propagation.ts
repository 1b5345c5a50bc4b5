import type { Envtest } from "@replica-mirror/envtest";
import {
  appSecret,
  appValue,
  type BenchCluster,
  NOISE_NAMESPACE,
  startCluster,
} from "./cluster.ts";
import { seededRandom } from "./fixtures.ts";
import { HttpProbe, metric } from "./http-probe.ts";
import { fmt, quantile, type Row } from "./measure.ts";
import { startSynced } from "./shipped.ts";
import type { SuiteContext, SuiteOutput } from "./suite.ts";

const CHURN_PER_SECOND = 1000;

/**
 * From a Secret write accepted by envtest (`apply` returned, in this process) to the first
 * `/v1/route` answer of a `replica-mirror serve` process that reflects it: each write flips one
 * random App between an empty and a non-empty value, which flips its route answer 503 <-> 200,
 * on the shipped artifact started as the image starts it (32-byte values, gzip Registry),
 * and one kept-alive connection polls until it sees the flip. With churn, 1,000 writes per second
 * to Secrets no App references run in the background. Quiet and churn segments alternate.
 */
export async function benchPropagation(ctx: SuiteContext): Promise<SuiteOutput> {
  const writes = ctx.quick ? 100 : 400;
  const rows: Row[] = [];
  const data: Record<number, { quiet: number[]; churn: number[]; ignored: number }> = {};
  for (const apps of [1_000, 10_000]) {
    const cluster = await startCluster(apps, 32);
    const sidecar = (await startSynced(cluster, { env: ctx.env })).server;
    try {
      const samples = { quiet: [] as number[], churn: [] as number[] };
      const ready = new Map<number, boolean>();
      const random = seededRandom(apps);
      const probe = new HttpProbe(sidecar.dataPort);
      const segments = 4;
      for (let s = 0; s < segments; s++) {
        // Alternate which condition goes first, so drift on a shared machine hits both alike.
        const order = s % 2 === 0 ? (["quiet", "churn"] as const) : (["churn", "quiet"] as const);
        for (const mode of order) {
          const churn = mode === "churn" ? startChurn(cluster.envtest) : null;
          try {
            // Let the churn reach its rate before measuring.
            if (churn !== null) await sleep(200);
            for (let w = 0; w < writes / segments; w++) {
              const i = Math.floor(random() * apps);
              const nowReady = !(ready.get(i) ?? true);
              samples[mode].push(await flip(cluster, probe, i, nowReady));
              ready.set(i, nowReady);
              await sleep(2 + random() * 3);
            }
          } finally {
            await churn?.stop();
          }
        }
      }
      probe.close();
      const ignored = await metric(sidecar.opsPort, "replica_mirror_ignored_events_total");
      const rate = ignored / churnSeconds;
      churnSeconds = 0;
      const p = (xs: number[], q: number) => quantile(xs, q);
      const quiet99 = p(samples.quiet, 0.99);
      const churn99 = p(samples.churn, 0.99);
      data[apps] = { ...samples, ignored };
      const label = `${apps / 1000}k Apps (gzip)`;
      rows.push({
        bench: `propagation p50 / p99, ${label}, ${samples.quiet.length} writes`,
        figure: `${fmt(p(samples.quiet, 0.5))} / ${fmt(quiet99)} ms`,
        baseline: "kubelet-mounted Secret: up to ~60 s (sync period + cache TTL)",
        ratio: `${fmt(60_000 / quiet99, 0)}x sooner`,
        target: apps === 10_000 ? "p99 < 10 ms" : "-",
        met: apps === 10_000 ? (quiet99 < 10 ? "yes" : "no") : "-",
      });
      const moved = churn99 / quiet99 - 1;
      rows.push({
        bench: `propagation p50 / p99, ${label}, with ${CHURN_PER_SECOND} unrelated writes/s, ${samples.churn.length} writes`,
        figure: `${fmt(p(samples.churn, 0.5))} / ${fmt(churn99)} ms`,
        baseline: `without churn ${fmt(p(samples.quiet, 0.5))} / ${fmt(quiet99)} ms (the sidecar ignored ${ignored} unrelated events: ${fmt(rate, 0)}/s while churning)`,
        ratio: `p99 ${moved >= 0 ? "+" : ""}${fmt(moved * 100, 0)}%`,
        target: "p99 moves < 20%",
        met: moved < 0.2 ? "yes" : "no",
      });
    } finally {
      await sidecar.stop();
      await cluster.close();
    }
  }
  return { rows, data };
}

/** Writes App `i`'s Secret and polls its host until the route answer shows it; returns ms. */
async function flip(
  cluster: BenchCluster,
  probe: HttpProbe,
  i: number,
  ready: boolean,
): Promise<number> {
  const want = ready ? 200 : 503;
  const host = `app-${i}.example.com`;
  cluster.envtest.apply({ ...appSecret(i), data: { token: ready ? appValue(i, 32, "r") : "" } });
  const t0 = performance.now();
  for (;;) {
    const answer = await probe.request("/v1/route", host);
    const t = performance.now() - t0;
    if (answer.status === want) return t;
    if (t > 10_000) throw new Error(`${host}: still ${answer.status} after 10 s`);
  }
}

/** Churn writes so far, across segments: every write carries new bytes, so none is a no-op. */
let churnWrites = 0;

/** 1,000 writes per second to 1,000 Secrets no App references, paced every 5 ms. */
function startChurn(envtest: Envtest): { stop(): Promise<void> } {
  const started = performance.now();
  const first = churnWrites;
  const timer = setInterval(() => {
    const due = first + Math.floor(((performance.now() - started) * CHURN_PER_SECOND) / 1000);
    for (; churnWrites < due; churnWrites++) {
      envtest.apply({
        namespace: NOISE_NAMESPACE,
        name: `churn-${churnWrites % 1000}`,
        data: { blob: `${churnWrites}`.padEnd(256, "c") },
      });
    }
  }, 5);
  return {
    async stop() {
      clearInterval(timer);
      churnSeconds += (performance.now() - started) / 1000;
    },
  };
}

/** Seconds of churn so far, for the achieved rate. */
let churnSeconds = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
