// Watch reconnects leak nothing: the sidecar (startSidecar, in this process) has its watches
// dropped mid-stream over and over (envtest faults.dropWatches) and reopens them each time. From
// the start of the run to its end, the heap after a full collection, this process's active
// resources by type (sockets, timers, ...) and the API server's established connections must
// not grow. REPLICA_MIRROR_LONG=1 runs 10,000 reconnects (default 400).

import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, getJson, metricValue, untilReady } from "../support/http.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { LONG, size, waitUntil } from "../support/wait.ts";
import { APP_NS } from "../support/world.ts";
import { seedWorld } from "../support/world-apps.ts";

const RECONNECTS = size(400, 10_000);
const HEAP_BOUND_BYTES = 8 * 1024 * 1024;

// vitest runs without --expose-gc; V8 hands out gc() to a new context once the flag is set.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** This process's active resources, counted by type (TCPSocketWrap, Timeout, ...). */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

/** Established TCP connections whose local port is `port`: the server side of each connection. */
function serverConnections(port: number): number {
  let n = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1];
      if (local === undefined || cols[3] !== "01") continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16) === port) n++;
    }
  }
  return n;
}

let envtest: Envtest;
let sidecar: TestSidecar;
let logLines = 0;

beforeAll(async () => {
  // A bookmark every 10 ms: each reopened watch hears from the server before it is dropped
  // again, as a real watch would, so these are reconnects after healthy watches, not a storm of
  // empty ones (which the reflector rightly backs off from).
  envtest = await startEnvtest({ bookmarkIntervalMs: 10 });
  seedWorld(envtest);
  // Counted, not kept: the log is not what this test measures.
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines += String(chunk).split("\n").length - 1;
      done();
    },
  });
  sidecar = await startTestSidecar(envtest, {
    watchTimeoutSeconds: 300,
    logger: pino({ level: "info" }, sink),
    reflector: "production",
  });
  await untilReady(sidecar.ops.port);
});

afterAll(async () => {
  await sidecar?.stop();
  await envtest?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("watch reconnects", () => {
  it(`leave no growth in heap, sockets or timers over ${RECONNECTS} reconnects`, async () => {
    let reconnects = 0;
    const round = async () => {
      await waitUntil(() => (envtest.openWatches === 2 ? true : undefined), {
        timeoutMs: 30_000,
        what: "both watches reopened",
      });
      await sleep(15); // a bookmark or two on each
      reconnects += envtest.faults.dropWatches();
    };
    const settled = async () => {
      await waitUntil(() => (envtest.openWatches === 2 ? true : undefined), {
        timeoutMs: 30_000,
        what: "both watches reopened",
      });
      await sleep(50);
      envtest.requests.clear();
    };
    for (let i = 0; i < 20; i++) await round();
    await settled();
    const start = {
      heap: heapUsed(),
      resources: resources(),
      server: serverConnections(envtest.port),
    };
    const baseReconnects = reconnects;
    const samples: string[] = [];
    const every = Math.max(2, Math.floor(RECONNECTS / 10));
    let nextSample = every;
    const t0 = Date.now();
    while (reconnects - baseReconnects < RECONNECTS) {
      await round();
      if ((reconnects - baseReconnects) % 200 === 0) envtest.requests.clear();
      if (reconnects - baseReconnects >= nextSample) {
        nextSample += every;
        samples.push(`${reconnects - baseReconnects}:${(heapUsed() / 2 ** 20).toFixed(2)}`);
      }
    }
    const seconds = (Date.now() - t0) / 1000;
    await settled();
    const end = {
      heap: heapUsed(),
      resources: resources(),
      server: serverConnections(envtest.port),
    };

    // The mirror still converges after all that.
    const rv = envtest.apply({
      namespace: APP_NS,
      name: "blog-credentials",
      data: { token: "after" },
    }).metadata.resourceVersion;
    await waitUntil(
      async () => {
        const a = await getJson<{ apps: { name: string; secretResourceVersion: string | null }[] }>(
          sidecar.ops.port,
          "/v1/apps",
        );
        return a.apps.find((x) => x.name === "blog")?.secretResourceVersion === rv
          ? true
          : undefined;
      },
      { timeoutMs: 10_000, what: "a change after the reconnects" },
    );
    const metrics = (await get(sidecar.ops.port, "/metrics")).body;
    const dropped = ["registry", "secrets/*"].map(
      (reflector) =>
        metricValue(metrics, "replica_mirror_watch_restarts_total", {
          reflector,
          reason: "dropped",
        }) ?? 0,
    );
    const relists = metrics
      .split("\n")
      .filter((l) => l.startsWith("replica_mirror_relists_total{")).length;

    const mib = (b: number) => (b / 2 ** 20).toFixed(2);
    console.log(
      `reconnects${LONG ? " (long)" : ""}: ${reconnects - baseReconnects} in ${seconds.toFixed(1)} s; heap ${mib(start.heap)} -> ${mib(end.heap)} MiB (samples ${samples.join(" ")}); resources ${JSON.stringify(start.resources)} -> ${JSON.stringify(end.resources)}; API server connections ${start.server} -> ${end.server}; dropped restarts counted ${dropped.join("+")}; ${logLines} log lines`,
    );

    expect(end.heap - start.heap, `heap grew ${mib(end.heap - start.heap)} MiB`).toBeLessThan(
      HEAP_BOUND_BYTES,
    );
    const types = new Set([...Object.keys(start.resources), ...Object.keys(end.resources)]);
    for (const type of types) {
      const before = start.resources[type] ?? 0;
      const after = end.resources[type] ?? 0;
      // A pooled keep-alive socket or a pending timer may come and go; growth with the count may not.
      expect(after, `${type}: ${before} -> ${after}`).toBeLessThanOrEqual(before + 2);
    }
    expect(end.server).toBeLessThanOrEqual(start.server + 1);
    expect(envtest.openWatches).toBe(2);
    expect(dropped[0]! + dropped[1]!).toBeGreaterThanOrEqual(reconnects - 2);
    expect(relists).toBe(0);
  }, 900_000);
});
