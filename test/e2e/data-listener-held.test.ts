// Held connections cannot lock the data plane out (issue 42, item 10; ADR 49). A `serve` process
// with the data listener's loopback defaults: no idle timeout, 1,024 connections, headers within
// 10 s. 2,000 idle connections (one route request each, then silence) and 200 slow ones (part of
// a request, then nothing) are opened and held; only then does the load generator open its
// connections, which must all get in, and route. Each round is sandwiched, a run without the
// flood on either side of the run with it, and its ratio is the flooded run's req/s over the mean
// of the two. The old listener closed every connection past its cap: 0 req/s, every request
// failed. Short (npm test): one round of 2 s runs, the ratio at least 0.5, a margin for a shared
// two-core machine; REPLICA_MIRROR_LONG=1: five rounds of 3 s, the median at least 0.8.

import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LoadGenerator, type LoadResult, startLoadGenerator } from "../../bench/load.ts";
import { median } from "../../bench/measure.ts";
import { openFlood } from "../support/flood.ts";
import { get } from "../support/http.ts";
import type { ProcessWorld } from "../support/process-world.ts";
import { startProcessWorld } from "../support/process-world.ts";
import { LONG, waitUntil } from "../support/wait.ts";
import { APP_NS } from "../support/world.ts";

const APPS = 20;
const IDLE = 2_000;
const SLOW = 200;
const CAP = 1_024;
const LOAD_CONNECTIONS = 16;
/** Odd, so that the median is one round's ratio. */
const ROUNDS = LONG ? 5 : 1;
const SECONDS = LONG ? 3 : 2;
const MIN_RATIO = LONG ? 0.8 : 0.5;

let world: ProcessWorld;
let load: LoadGenerator;
const hostsFile = join(tmpdir(), `replica-mirror-held-hosts-${process.pid}.txt`);
const host = (i: number) => `app-${i % APPS}.example.com`;

beforeAll(async () => {
  const apps = Array.from({ length: APPS }, (_, i) => ({
    name: `app-${i}`,
    hostnames: [host(i)],
    namespace: APP_NS,
    upstream: `http://app-${i}.${APP_NS}.svc:8080`,
  }));
  writeFileSync(hostsFile, `${apps.map((a) => a.hostnames[0]).join("\n")}\n`);
  world = await startProcessWorld(apps);
  await waitUntil(
    async () =>
      (await get(world.sidecar.dataPort, "/v1/route", { host: host(APPS - 1) })).status === 200,
    { what: "the sidecar to route every App" },
  );
  load = await startLoadGenerator();
}, 30_000);

afterAll(async () => {
  await load?.close();
  await world?.close();
  rmSync(hostsFile, { force: true });
});

describe("the data listener on loopback, with 2,000 idle and 200 slow connections held", () => {
  it(
    `lets the load generator's connections in and routes at ${MIN_RATIO}x its throughput without them`,
    async () => {
      const run = (seconds: number) =>
        load.run({
          port: world.sidecar.dataPort,
          path: "/v1/route",
          seconds,
          connections: LOAD_CONNECTIONS,
          hostsFile,
        });
      // The flood, held while the load generator opens its connections and routes; how many of
      // each kind were still open at the end: the load generator's connections took the places of
      // the longest-idle ones, and no slow one was closed while an idle one was open.
      const floodedRun = async () => {
        const flood = await openFlood(world.sidecar.dataPort, { idle: IDLE, slow: SLOW, host });
        try {
          await flood.settled();
          const flooded = await run(SECONDS);
          return { flooded, held: flood.open() };
        } finally {
          flood.stop();
        }
      };
      await run(1);
      type Round = { before: LoadResult; flooded: LoadResult; after: LoadResult };
      const rounds: (Round & { held: { idle: number; slow: number } })[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const before = await run(SECONDS);
        const { flooded, held } = await floodedRun();
        // The server closes what the flood left before the next run.
        await new Promise((r) => setTimeout(r, 300));
        rounds.push({ before, flooded, after: await run(SECONDS), held });
      }
      const rps = (r: LoadResult) => r.requests / r.seconds;
      const ratios = rounds.map((r) => rps(r.flooded) / ((rps(r.before) + rps(r.after)) / 2));
      const ratio = median(ratios);
      const figures = {
        ratio: Number(ratio.toFixed(3)),
        ratios: ratios.map((x) => Number(x.toFixed(3))),
        rps: rounds.map((r) => [r.before, r.flooded, r.after].map((x) => Math.round(rps(x)))),
        held: rounds.map((r) => r.held),
      };
      console.log(`data listener held: ${JSON.stringify(figures)}`);
      for (const r of rounds)
        expect({
          failures: [r.before.failures, r.flooded.failures, r.after.failures],
          held: r.held,
        }).toEqual({
          failures: [0, 0, 0],
          held: { idle: CAP - SLOW - LOAD_CONNECTIONS, slow: SLOW },
        });
      expect(ratio).toBeGreaterThanOrEqual(MIN_RATIO);
    },
    (ROUNDS * (3 * SECONDS + 15) + 10) * 1000,
  );
});
