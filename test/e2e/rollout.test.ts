// The end of a replica in a rollout: SIGTERM reaches the sidecar (a real `serve` process) while a
// load generator routes through real nginx with the shipped configuration. For the shutdown
// grace the sidecar keeps routing (nginx's kept-alive connections to it stay usable) and keeps
// /healthz at 200, while /readyz turns 503; only then do its listeners close, and it exits 0.

import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DataPlaneProcess, freePort, through } from "../support/data-plane.ts";
import { get } from "../support/http.ts";
import { shippedPlane } from "../support/plane-in-front.ts";
import type { SidecarProcess } from "../support/process.ts";
import { type ProcessWorld, startProcessWorld } from "../support/process-world.ts";
import { APP_NS } from "../support/world.ts";

const GRACE_MS = 3_000;
/** Requests begun this close to the end of the grace may meet the listeners closing. */
const MARGIN_MS = 300;
/** /readyz turns 503 within ms of SIGTERM quiet; a busy machine delays the signal and the probe. */
const READYZ_DROPS_WITHIN_MS = 2_000;
const CLIENTS = 8;
const HOST = "shop.example.com";

/** One request through the data plane: when it began and ended, and its status or error. */
interface Sent {
  readonly start: number;
  readonly end: number;
  readonly outcome: number | string;
}

/** Requests from `CLIENTS` kept-alive clients, one after another each, until `until()`. */
async function routeUntil(port: number, until: () => boolean): Promise<Sent[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const sent: Sent[] = [];
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.get(
        { host: "127.0.0.1", port, path: "/", headers: { host: HOST }, agent, timeout: 5_000 },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", reject);
    });
  const client = async () => {
    while (!until()) {
      const start = performance.now();
      const outcome = await one().catch((e: unknown) => String(e));
      sent.push({ start, end: performance.now(), outcome });
    }
  };
  try {
    await Promise.all(Array.from({ length: CLIENTS }, client));
  } finally {
    agent.destroy();
  }
  return sent;
}

const nginx = shippedPlane("nginx");

// Skipped only where the proxy binary is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(nginx.binary.path === undefined)("SIGTERM to the sidecar behind nginx", () => {
  let world: ProcessWorld;
  let upstream: http.Server;
  let sidecar: SidecarProcess;
  let plane: DataPlaneProcess;
  let dir: string;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-rollout-"));
    upstream = http.createServer((_req, res) => res.end("ok"));
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const upstreamPort = (upstream.address() as { port: number }).port;
    const sidecarPort = await freePort();
    world = await startProcessWorld(
      [
        {
          name: "shop",
          hostnames: [HOST],
          namespace: APP_NS,
          upstream: `http://127.0.0.1:${upstreamPort}`,
        },
      ],
      ["--listen", `127.0.0.1:${sidecarPort}`, "--shutdown-grace", String(GRACE_MS / 1000)],
    );
    sidecar = world.sidecar;
    port = await freePort();
    plane = await nginx.start(nginx.binary.path!, { port, dir, sidecarPort });
  }, 40_000);

  afterAll(async () => {
    await plane?.stop();
    await world?.close(1_000);
    await new Promise((r) => upstream?.close(r));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("routes every request of the grace period 200, and only then closes and exits 0", async () => {
    let signalledAt = Number.POSITIVE_INFINITY;
    let stopping: Promise<unknown> | null = null;
    const probes: [string, number][] = [];
    const load = routeUntil(port, () => performance.now() > signalledAt + GRACE_MS - MARGIN_MS);
    await new Promise((r) => setTimeout(r, 1_000));
    signalledAt = performance.now();
    stopping = sidecar.stop(GRACE_MS + 10_000);
    // The signal reaches the process a moment after kill() returns: a probe sent in between is
    // still answered 200. Readiness must drop soon after, and stay down.
    while ((await get(sidecar.opsPort, "/readyz")).status !== 503) {
      if (performance.now() > signalledAt + READYZ_DROPS_WITHIN_MS) break;
    }
    const readyzDroppedAfterMs = performance.now() - signalledAt;
    // What the kubelet and the data plane see during the grace.
    while (performance.now() < signalledAt + GRACE_MS - MARGIN_MS) {
      for (const path of ["/readyz", "/healthz"])
        probes.push([path, (await get(sidecar.opsPort, path)).status]);
      probes.push(["route", (await get(sidecar.dataPort, "/v1/route", { host: HOST })).status]);
      await new Promise((r) => setTimeout(r, 200));
    }
    const sent = await load;
    const exit = await stopping;
    const exitedAfterMs = performance.now() - signalledAt;
    const inGrace = sent.filter((s) => s.start >= signalledAt);
    const outcomes: Record<string, number> = {};
    for (const s of sent) outcomes[s.outcome] = (outcomes[s.outcome] ?? 0) + 1;
    expect({
      outcomes: Object.keys(outcomes),
      routedInGrace: inGrace.length > 100,
      probes: [...new Set(probes.map(([what, status]) => `${what} ${status}`))].sort(),
      exit,
      closedAfterGrace: exitedAfterMs >= GRACE_MS,
      readyzDroppedSoon: readyzDroppedAfterMs < READYZ_DROPS_WITHIN_MS,
    }).toEqual({
      outcomes: ["200"],
      routedInGrace: true,
      readyzDroppedSoon: true,
      probes: ["/healthz 200", "/readyz 503", "route 200"],
      exit: { code: 0, signal: null },
      closedAfterGrace: true,
    });
    // Once it exited, nginx has no sidecar to ask: the test did stop it.
    const after = await through(port, { host: HOST });
    expect([after.status, after.body]).toEqual([500, "routing sidecar unreachable\n"]);
  }, 40_000);
});
