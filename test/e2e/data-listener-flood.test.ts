// The data listener under connections that try to hold it open (issue 29, item 3; ADR 49): a
// `serve` process whose data listener has the timeouts of a listener off loopback (an idle timeout
// set by flag; it listens on 127.0.0.1, as every test server does), and the default cap of 1024
// connections. A load generator routes over 16 kept-alive connections; in alternating rounds,
// 2,000 idle connections (one route request each, then silence) and 200 slow-header ones (a
// header line a second, never finished) are opened against the same listener while it routes.
// At the cap each new connection closes the longest-idle one: every slow one is answered 408 at
// its headers timeout, every idle one is closed at its idle timeout or, earlier, to make room; the
// process never holds more than the cap, the load generator's requests all succeed, and resident
// memory stays bounded. With REPLICA_MIRROR_LONG=1 (five rounds of 5 s, about 90 s) it also holds
// throughput to at least 0.8x that of the rounds without the flood: on a shared two-core machine
// a round's throughput swings by a third either way, flood or not, which a short run cannot tell
// from a cost. Flooded before the load generator connects, on loopback defaults:
// data-listener-held.test.ts.

import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadResult } from "../../bench/load.ts";
import { median } from "../../bench/measure.ts";
import { cpuMicros, rssBytes } from "../../bench/proc-stats.ts";
import { type Opened, openFlood } from "../support/flood.ts";
import type { SidecarProcess } from "../support/process.ts";
import { type RoutedLoad, startRoutedLoad } from "../support/routed-load.ts";
import { LONG, waitUntil } from "../support/wait.ts";

const APPS = 20;
const IDLE = 2_000;
const SLOW = 200;
const CAP = 1_024;
const LOAD_CONNECTIONS = 16;
/** Odd, so that the median is one round's ratio. */
const ROUNDS = LONG ? 5 : 1;
const SECONDS = LONG ? 5 : 3;
/** Longer than a run: the flood is held for the whole of it. */
const IDLE_TIMEOUT_S = SECONDS + 1;
const HEADERS_TIMEOUT_S = SECONDS + 1;
/** Node keeps an idle socket one second past the timeout it announces (keepAliveTimeoutBuffer). */
const IDLE_BUFFER_MS = 1_000;
/** Node checks the headers timeout once a second. */
const CHECK_INTERVAL_MS = 1_000;
/** Scheduling slack on a shared machine. */
const SLACK_MS = 1_500;

/**
 * How a connection of each kind must end once answered: its status, then closed by the timeout
 * (an idle one counted from its answer, a slow one from its connect), at most `lateMs` past it.
 */
const ENDS = {
  idle: {
    status: 200,
    timeoutS: IDLE_TIMEOUT_S,
    lateMs: IDLE_BUFFER_MS,
    inTime: "idle, closed in time",
  },
  slow: {
    status: 408,
    timeoutS: HEADERS_TIMEOUT_S,
    lateMs: CHECK_INTERVAL_MS,
    inTime: "slow, 408 in time",
  },
} as const;

/** How each connection of the flood ended, judged against the listener's limits. */
function judge(opened: readonly Opened[]) {
  const verdicts: Record<string, number> = {};
  for (const o of opened) {
    let verdict: string;
    const e = ENDS[o.kind];
    // An idle one from its answer, a slow one from its connect.
    const since = o.kind === "idle" ? o.answeredAt : o.connectedAt;
    const ms = o.closedAt === null || since === null ? null : o.closedAt - since;
    if (o.closedAt === null) verdict = "still open";
    else if (o.status !== null && o.status !== e.status) verdict = `${o.kind}, ${o.status}`;
    else if (ms !== null && ms >= e.timeoutS * 1000 - 200)
      verdict = ms <= e.timeoutS * 1000 + e.lateMs + SLACK_MS ? e.inTime : `${o.kind}, closed late`;
    else if (o.kind === "slow" && o.status !== null) verdict = "slow, 408 early";
    // Closed before its timeout (an idle one answered or not yet, a slow one unanswered): to make
    // room at the cap.
    else verdict = `${o.kind}, evicted`;
    verdicts[verdict] = (verdicts[verdict] ?? 0) + 1;
  }
  return verdicts;
}

/** File descriptors open in process `pid`: its sockets, among others. */
const fdCount = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

let routed: RoutedLoad;
let sidecar: SidecarProcess;

beforeAll(async () => {
  routed = await startRoutedLoad(APPS, [
    "--listen-idle-timeout",
    String(IDLE_TIMEOUT_S),
    "--listen-headers-timeout",
    String(HEADERS_TIMEOUT_S),
    "--max-connections",
    String(CAP),
  ]);
  sidecar = routed.world.sidecar;
}, 30_000);

afterAll(() => routed?.close());

describe("the data listener with off-loopback timeouts, flooded while it routes", () => {
  it(
    "closes every flood connection in time or to make room at the cap, keeps routing and bounded memory (and 0.8x its throughput: long mode)",
    async () => {
      const run = async (seconds: number) => {
        const cpu0 = cpuMicros(sidecar.pid);
        const self0 = process.cpuUsage();
        const r = await routed.load.run({
          port: sidecar.dataPort,
          path: "/v1/route",
          seconds,
          connections: LOAD_CONNECTIONS,
          hostsFile: routed.hostsFile,
        });
        const self = process.cpuUsage(self0);
        return {
          ...r,
          cpuUs: (cpuMicros(sidecar.pid) - cpu0) / r.requests,
          testCpuMs: (self.user + self.system) / 1000,
        };
      };
      await run(1);
      // Once the sidecar closed the load generator's connections.
      await new Promise((r) => setTimeout(r, 300));
      const rssBefore = rssBytes(sidecar.pid);
      const fdsBefore = fdCount(sidecar.pid);
      let rssPeak = rssBefore;
      let fdsPeak = fdsBefore;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, rssBytes(sidecar.pid));
        fdsPeak = Math.max(fdsPeak, fdCount(sidecar.pid));
      }, 100);
      type Run = LoadResult & { cpuUs: number; testCpuMs: number };
      /** Each round's runs, how its flood ended, and the highest RSS by its end. */
      type Round = { plain: Run; flooded: Run; verdicts: Record<string, number>; rssPeak: number };
      const rounds: Round[] = [];
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const plain = await run(SECONDS);
          const running = run(SECONDS);
          // Once the load generator holds its connections.
          await new Promise((r) => setTimeout(r, 300));
          const flood = await openFlood(sidecar.dataPort, {
            idle: IDLE,
            slow: SLOW,
            host: (i) => `app-${i % APPS}.example.com`,
            trickleMs: 1_000,
          });
          const flooded = await running;
          await waitUntil(() => flood.opened.every((o) => o.closedAt !== null), {
            timeoutMs: (IDLE_TIMEOUT_S + 1) * 1000 + IDLE_BUFFER_MS + 2 * SLACK_MS,
            intervalMs: 100,
            what: "every flood connection to close",
          }).catch(() => undefined);
          flood.stop();
          rounds.push({ plain, flooded, verdicts: judge(flood.opened), rssPeak });
        }
      } finally {
        clearInterval(sampler);
      }
      const rps = (r: LoadResult) => r.requests / r.seconds;
      const ratio = median(rounds.map((r) => rps(r.flooded) / rps(r.plain)));
      const figures = {
        ratio: Number(ratio.toFixed(3)),
        plainRps: rounds.map((r) => Math.round(rps(r.plain))),
        floodedRps: rounds.map((r) => Math.round(rps(r.flooded))),
        plainCpuUsPerRequest: rounds.map((r) => Number(r.plain.cpuUs.toFixed(1))),
        floodedCpuUsPerRequest: rounds.map((r) => Number(r.flooded.cpuUs.toFixed(1))),
        testCpuMs: rounds.map((r) => [
          Math.round(r.plain.testCpuMs),
          Math.round(r.flooded.testCpuMs),
        ]),
        rssBeforeMiB: Math.round(rssBefore / 2 ** 20),
        rssPeakMiB: rounds.map((r) => Math.round(r.rssPeak / 2 ** 20)),
        fdsBefore,
        fdsPeak,
        verdicts: rounds.map((r) => r.verdicts),
      };
      console.log(`data listener flood: ${JSON.stringify(figures)}`);
      // The flood keeps the places the load generator leaves: the slow ones all (never idle), the
      // idle ones that came last; every other idle one made room for a later one.
      const kept = CAP - LOAD_CONNECTIONS - SLOW;
      for (const r of rounds)
        expect({ failures: [r.plain.failures, r.flooded.failures], verdicts: r.verdicts }).toEqual({
          failures: [0, 0],
          verdicts: {
            "idle, closed in time": kept,
            "idle, evicted": IDLE - kept,
            "slow, 408 in time": SLOW,
          },
        });
      // The cap held: no more sockets than the cap at once (a watch reconnecting may add one).
      expect(fdsPeak - fdsBefore).toBeGreaterThan(CAP - 8);
      expect(fdsPeak - fdsBefore).toBeLessThanOrEqual(CAP + 4);
      // Every flood connection is accepted and answered before it may make room (before ADR 49,
      // 1,192 a round were closed before Node built anything): 63-66 MiB after five rounds, flat
      // from the third, against 57 then.
      expect(rssPeak - rssBefore).toBeLessThan(80 * 2 ** 20);
      if (LONG) expect(ratio).toBeGreaterThanOrEqual(0.8);
    },
    (ROUNDS * (2 * SECONDS + IDLE_TIMEOUT_S + 6) + 10) * 1000,
  );
});
