// Write to answer: from just before envtest (in a process of its own, cluster-process.ts) stores
// an API write until the proxy (not the sidecar) gives the answer the write makes. Each proxy in
// zero-hop mode with its own sidecar, then nginx in hop mode, one at a time with nothing else
// watching the cluster (every sidecar reacts to every write, and a Caddy reload would slow
// whichever proxy is being timed). Each write empties one App's Secret value (200 becomes 503
// secret-unavailable) or fills it again (back to 200).

import { appSecret, appValue } from "../cluster.ts";
import { seededRandom } from "../fixtures.ts";
import { startSynced } from "../shipped.ts";
import { type AnswerProbe, answerProbe, type SeenAnswer, untilAnswer } from "./answer-probe.ts";
import type { WorldCluster } from "./cluster-process.ts";
import type { WriteToAnswerData } from "./data.ts";
import { type PhaseOptions, scratch, startVariant } from "./load-phase.ts";
import { PROXIES, variantName } from "./proxies.ts";
import { QUIET_DESCRIPTION, quietLine, untilQuiet } from "./quiet.ts";
import { startZeroHopPair, waitForTables } from "./zero-hop.ts";

const ROUTED: SeenAnswer = { status: 200, reason: null };
const UNAVAILABLE: SeenAnswer = { status: 503, reason: "secret-unavailable" };
/** The bytes of the value a refilled Secret gets, as the cluster seeds them. */
const VALUE_BYTES = 1024;
/**
 * Between two asks: polling with no pause took CPU the sidecar needed for its push on this two-core
 * machine (write to answer, median of 18 alternating writes: HAProxy 44.8 ms polling without a
 * pause, 35.0 ms with 1 ms; nginx 63.0 and 45.3 ms); 1 ms keeps the resolution near 1 ms.
 */
export const PAUSE_MS = 1;
/** Untimed writes first (one App emptied and filled): the first pushes after a start run cold. */
export const WARM_UP_WRITES = 2;

export const WRITE_DESCRIPTION = `each write empties an App's Secret value (200 → 503 secret-unavailable) or refills it; ${QUIET_DESCRIPTION}, ${WARM_UP_WRITES} untimed first; the proxy asked every ${PAUSE_MS} ms, kept alive`;

/** `writes` (even) timed writes for each variant at `cluster`'s size; stops what it started. */
export async function benchWrites(
  cluster: WorldCluster,
  o: PhaseOptions,
  writes: number,
): Promise<WriteToAnswerData> {
  const random = seededRandom(cluster.apps + writes);
  const apps = () => distinct((writes + WARM_UP_WRITES) / 2, cluster.apps, random);
  const samples: Record<string, number[]> = {};
  const warmUp: Record<string, number[]> = {};
  const record = (name: string, times: number[]) => {
    warmUp[name] = times.slice(0, WARM_UP_WRITES);
    samples[name] = times.slice(WARM_UP_WRITES);
  };
  for (const { kind } of PROXIES) {
    const pair = await startZeroHopPair(kind, {
      cluster,
      binary: o.binaries[kind],
      dir: await scratch(o, `${kind}-zero-hop-writes`),
      env: o.ctx.env,
    });
    try {
      const settle = () => waitForTables(pair.sidecar.opsPort, 60_000);
      console.error(
        quietLine(
          variantName(kind, "zero-hop"),
          await untilQuiet(pair.sidecar.cpuMicros, pair.proxy.cpuMicros, cluster.cpuMicros),
        ),
      );
      record(
        variantName(kind, "zero-hop"),
        await timeWrites(cluster, pair.proxy.port, apps(), settle),
      );
    } finally {
      await pair.stop();
    }
  }
  const sidecar = (await startSynced(cluster, { env: o.ctx.env })).server;
  try {
    const nginx = await startVariant("nginx", "hop", o, sidecar.dataPort);
    try {
      console.error(
        quietLine(
          variantName("nginx", "hop"),
          await untilQuiet(sidecar.cpuMicros, cluster.cpuMicros),
        ),
      );
      record(variantName("nginx", "hop"), await timeWrites(cluster, nginx.port, apps(), noop));
    } finally {
      await nginx.stop();
    }
  } finally {
    await sidecar.stop();
  }
  return { apps: cluster.apps, write: WRITE_DESCRIPTION, samples, warmUp };
}

const noop = async () => {};

/**
 * For each App of `indices` (all ready), empties its Secret value, then fills it again, each
 * write timed until the proxy on `port` answers for the App's host as the write says; `settle`
 * waits, between writes, until the sidecar has nothing left to push. Returns ms per write.
 */
async function timeWrites(
  cluster: WorldCluster,
  port: number,
  indices: readonly number[],
  settle: () => Promise<unknown>,
): Promise<number[]> {
  const probe = answerProbe(port);
  const times: number[] = [];
  try {
    for (const i of indices) {
      const host = `app-${i}.example.com`;
      await until(probe, host, ROUTED, performance.now());
      for (const ready of [false, true]) {
        const since = await cluster.write([
          { ...appSecret(i), data: { token: ready ? appValue(i, VALUE_BYTES, "r") : "" } },
        ]);
        times.push((await until(probe, host, ready ? ROUTED : UNAVAILABLE, since)) - since);
        await settle();
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  } finally {
    probe.close();
  }
  return times;
}

const until = (probe: AnswerProbe, host: string, want: SeenAnswer, since: number) =>
  untilAnswer(probe, host, want, { since, pauseMs: PAUSE_MS });

/** `count` distinct integers below `below`, drawn with `random`. */
export function distinct(count: number, below: number, random: () => number): number[] {
  const picked = new Set<number>();
  while (picked.size < Math.min(count, below)) picked.add(Math.floor(random() * below));
  return [...picked];
}
