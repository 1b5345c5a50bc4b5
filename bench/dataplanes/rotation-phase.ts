// Rotation: from just before an API write of an App's new credential value (its Secret's `token`)
// until the App's upstream, behind the real proxy, gets `Authorization: Bearer <the new value>`.
// Every proxy in zero-hop mode with its own sidecar, then in hop mode asking one sidecar, one at a
// time with nothing else watching the cluster, with write-phase.ts's care: a pause between asks,
// untimed rotations first, the start's tail (quiet.ts). The upstream answers with a
// digest of the Authorization it got (seen-upstream.ts); while a rotation lands, more connections
// ask for the same host, and no request sent after the first answer with the new value may carry
// the old one (rotation-observer.ts). The clients send an Authorization of their own, which every
// configuration must replace.

import { appSecret, appValue } from "../cluster.ts";
import { seededRandom } from "../fixtures.ts";
import { startSynced } from "../shipped.ts";
import { answerProbe } from "./answer-probe.ts";
import type { WorldCluster } from "./cluster-process.ts";
import { bytesLabel, CREDENTIAL } from "./credentials.ts";
import type { AfterNewCounts, RotationData } from "./data.ts";
import { type PhaseOptions, scratch, startVariant } from "./load-phase.ts";
import { PROXIES, variantName } from "./proxies.ts";
import { QUIET_DESCRIPTION, quietLine, untilQuiet } from "./quiet.ts";
import {
  addCounts,
  NO_COUNTS,
  observeRotation,
  rotationOutcome,
  type Seen,
  untilSeen,
} from "./rotation-observer.ts";
import { authorizationDigest } from "./seen-upstream.ts";
import { distinct, PAUSE_MS, WARM_UP_WRITES } from "./write-phase.ts";
import { startZeroHopPair, waitForTables } from "./zero-hop.ts";

/** Connections asking besides the timed one, each pausing this long between its requests. */
const WATCHERS = 3;
const WATCH_PAUSE_MS = 5;
/** How long every connection keeps asking after the first answer with the new value. */
const CHECK_MS = 100;
/** Without the new value by then, the variant does not hand on credentials. */
const TIMEOUT_MS = 30_000;
/** Before a rotation the App's current value must reach the upstream within this. */
const BEFORE_MS = 10_000;
/** What the clients send: a configuration that passes it on instead of the App's shows. */
const CLIENT_AUTHORIZATION = "Basic Y2xpZW50OnNlY3JldA==";

/** How each rotation is made and timed, for the table and the chart. */
export const rotationDescription = (valueBytes: number) =>
  `each rotation writes one App's Secret a new ${bytesLabel(valueBytes)} value, timed until the upstream got it as Authorization (${CREDENTIAL.prefix.trim()} + value); ${QUIET_DESCRIPTION}, ${WARM_UP_WRITES} untimed first; the proxy asked every ${PAUSE_MS} ms on one kept-alive connection, every ${WATCH_PAUSE_MS} ms on ${WATCHERS} more, each sending its own Authorization`;

/** A rotation that did not reach the upstream: the variant does not hand on credentials. */
class NotDelivered extends Error {}

/**
 * `rotations` timed rotations for each proxy in each mode at `cluster`'s size, whose Secrets hold
 * values of `valueBytes` (as seeded, and as written).
 */
export async function benchRotations(
  cluster: WorldCluster,
  o: PhaseOptions,
  rotations: number,
  valueBytes: number,
): Promise<RotationData> {
  const random = seededRandom(cluster.apps + rotations + 1);
  const book = valueBook(valueBytes);
  const samples: Record<string, number[]> = {};
  const warmUp: Record<string, number[]> = {};
  const afterNew: Record<string, AfterNewCounts> = {};
  const unmeasured: Record<string, string> = {};
  const run = async (name: string, port: number, settle: () => Promise<unknown>) => {
    const apps = distinct(rotations + WARM_UP_WRITES, cluster.apps, random);
    try {
      const r = await rotate(cluster, port, apps, book, settle);
      warmUp[name] = r.times.slice(0, WARM_UP_WRITES);
      samples[name] = r.times.slice(WARM_UP_WRITES);
      afterNew[name] = r.after;
    } catch (e) {
      if (!(e instanceof NotDelivered)) throw e;
      unmeasured[name] = e.message;
    }
  };
  for (const { kind } of PROXIES) {
    const pair = await startZeroHopPair(kind, {
      cluster,
      binary: o.binaries[kind],
      dir: await scratch(o, `${kind}-zero-hop-rotation`),
      env: o.ctx.env,
      serveCredentials: true,
    });
    try {
      const name = variantName(kind, "zero-hop");
      console.error(
        quietLine(
          name,
          await untilQuiet(pair.sidecar.cpuMicros, pair.proxy.cpuMicros, cluster.cpuMicros),
        ),
      );
      await run(name, pair.proxy.port, () => waitForTables(pair.sidecar.opsPort, 60_000));
    } finally {
      await pair.stop();
    }
  }
  const sidecar = (await startSynced(cluster, { env: o.ctx.env, serveCredentials: true })).server;
  try {
    console.error(quietLine("hop sidecar", await untilQuiet(sidecar.cpuMicros, cluster.cpuMicros)));
    for (const { kind } of PROXIES) {
      const proxy = await startVariant(kind, "hop", o, sidecar.dataPort);
      try {
        await run(variantName(kind, "hop"), proxy.port, async () => {});
      } finally {
        await proxy.stop();
      }
    }
  } finally {
    await sidecar.stop();
  }
  return {
    apps: cluster.apps,
    rotation: rotationDescription(valueBytes),
    valueBytes,
    connections: 1 + WATCHERS,
    checkMs: CHECK_MS,
    samples,
    warmUp,
    afterNew,
    unmeasured,
  };
}

/** The value each App's Secret holds: the bench is its one writer after the seed. */
interface ValueBook {
  current(app: number): string;
  /** A value never written before, recorded as the App's. */
  next(app: number): string;
}

function valueBook(bytes: number): ValueBook {
  const values = new Map<number, string>();
  let written = 0;
  return {
    current: (app) => values.get(app) ?? appValue(app, bytes),
    next(app) {
      written++;
      const value = appValue(app, bytes, `c${written}-`);
      values.set(app, value);
      return value;
    },
  };
}

/** The digest the upstream answers for App credential `value`. */
const digestOf = (value: string) => authorizationDigest([`${CREDENTIAL.prefix}${value}`]);

/**
 * Rotates each App of `apps` once through the proxy on `port`; `settle` waits, between
 * rotations, until the sidecar has nothing left to push. Returns each rotation's ms and the
 * requests after each first new answer, summed; throws NotDelivered when a value does not reach
 * the upstream.
 */
async function rotate(
  cluster: WorldCluster,
  port: number,
  apps: readonly number[],
  book: ValueBook,
  settle: () => Promise<unknown>,
): Promise<{ times: number[]; after: AfterNewCounts }> {
  const headers = { authorization: CLIENT_AUTHORIZATION };
  const timed = answerProbe(port, headers);
  const askers = [
    { probe: timed, pauseMs: PAUSE_MS },
    ...Array.from({ length: WATCHERS }, () => ({
      probe: answerProbe(port, headers),
      pauseMs: WATCH_PAUSE_MS,
    })),
  ];
  const times: number[] = [];
  let after = NO_COUNTS;
  const client = authorizationDigest([CLIENT_AUTHORIZATION]);
  try {
    for (const [n, i] of apps.entries()) {
      const host = `app-${i}.example.com`;
      const old = digestOf(book.current(i));
      const known = { [old]: "the App's value", [client]: "the client's own" };
      const missing = await untilSeen(timed, host, old, {
        pauseMs: PAUSE_MS,
        timeoutMs: BEFORE_MS,
        known,
      });
      if (missing !== null)
        throw new NotDelivered(`before rotation ${n + 1}, ${host} answered: ${missing}`);
      const value = book.next(i);
      const fresh = digestOf(value);
      const classify = (a: { status: number; seen: string | null }): Seen =>
        a.status !== 200 ? "other" : a.seen === fresh ? "new" : a.seen === old ? "old" : "other";
      const since = await cluster.write([{ ...appSecret(i), data: { token: value } }]);
      const observed = await observeRotation(askers, host, classify, {
        since,
        checkMs: CHECK_MS,
        timeoutMs: TIMEOUT_MS,
      });
      const outcome = rotationOutcome(observed, since);
      if (outcome.ms === null) {
        const count = (seen: Seen) => observed.filter((a) => a.seen === seen).length;
        throw new NotDelivered(
          `rotation ${n + 1}: the new value did not reach the upstream in ${TIMEOUT_MS / 1000} s (${count("old")} answers with the old value, ${count("other")} others, ${count("failed")} failed)`,
        );
      }
      times.push(outcome.ms);
      after = addCounts(after, outcome.after);
      await settle();
      await sleep(20);
    }
  } finally {
    for (const { probe } of askers) probe.close();
  }
  return { times, after };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
