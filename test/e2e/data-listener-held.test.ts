import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadResult } from "../../bench/load.ts";
import { median } from "../../bench/measure.ts";
import { openFlood } from "../support/flood.ts";
import { appHost, type RoutedLoad, startRoutedLoad } from "../support/routed-load.ts";
import { LONG } from "../support/wait.ts";

const APPS = 20;
const IDLE = 2_000;
const SLOW = 200;
const CAP = 1_024;
const LOAD_CONNECTIONS = 16;
/** Odd, so that the median is one round's ratio. */
const ROUNDS = LONG ? 5 : 1;
const SECONDS = LONG ? 3 : 2;
const MIN_RATIO = LONG ? 0.8 : 0.5;

let routed: RoutedLoad;
const host = (i: number) => appHost(APPS, i);

beforeAll(async () => {
  routed = await startRoutedLoad(APPS);
}, 30_000);

afterAll(() => routed?.close());

describe("the data listener on loopback, with 2,000 idle and 200 slow connections held", () => {
  it(
    `lets the load generator's connections in and routes at ${MIN_RATIO}x its throughput without them`,
    async () => {
      const run = (seconds: number) =>
        routed.load.run({
          port: routed.world.sidecar.dataPort,
          path: "/v1/route",
          seconds,
          connections: LOAD_CONNECTIONS,
          hostsFile: routed.hostsFile,
        });
      // The flood, held while the load generator opens its connections and routes; how many of
      // each kind were still open at the end: the load generator's connections took the places of
      // the longest-idle ones, and no slow one was closed while an idle one was open.
      const floodedRun = async () => {
        const flood = await openFlood(routed.world.sidecar.dataPort, {
          idle: IDLE,
          slow: SLOW,
          host,
        });
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
