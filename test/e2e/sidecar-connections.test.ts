// Every shipped data-plane configuration keeps its connections to the sidecar alive: a relay
// between the real data plane and the sidecar counts the connections the sidecar accepts while
// the data plane routes a few thousand requests. A configuration that connects per request (as
// nginx's `proxy_pass` without an upstream pool does) accepts one per request.

import http from "node:http";
import { connect, createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type { PlaneKind } from "../support/data-plane.ts";
import { shippedPlane, shippedPlaneThrough } from "../support/plane-in-front.ts";
import { HOSTS } from "../support/routing-world.ts";

const REQUESTS = 3_200;
/** Client connections, each sending its requests one after another. */
const CONCURRENCY = 16;
/**
 * Connections the sidecar may accept over the whole run: one per request the data plane has in
 * flight at once (at most CONCURRENCY, each of HAProxy's two threads holding its own), plus a
 * few. Far below REQUESTS, and far above what a pool-less configuration would stay under.
 */
const MAX_ACCEPTED = 2 * CONCURRENCY + 4;

const PLANES: readonly PlaneKind[] = ["nginx", "caddy", "haproxy"];

/** A TCP relay to 127.0.0.1:`target` that counts the connections it accepted. */
async function startCountingRelay(target: number) {
  let accepted = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    accepted++;
    const sidecar = connect(target, "127.0.0.1");
    for (const s of [client, sidecar]) {
      open.add(s);
      s.on("close", () => open.delete(s));
      // Either side gone ends both, as a direct connection would.
      s.on("error", () => {
        client.destroy();
        sidecar.destroy();
      });
    }
    client.pipe(sidecar).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as { port: number }).port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

/** `total` GETs for `host` over `concurrency` kept-alive client connections; counts by status. */
async function load(port: number, host: string, total: number, concurrency: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses: Record<number, number> = {};
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.get(
        { host: "127.0.0.1", port, path: "/", headers: { host }, agent, timeout: 10_000 },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error("request timed out")));
      req.on("error", reject);
    });
  const worker = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const status = await one();
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, () => worker(total / concurrency)));
  } finally {
    agent.destroy();
  }
  return statuses;
}

for (const kind of PLANES) {
  const shipped = shippedPlane(kind);
  const tool = shipped.binary;
  const binary = tool.path;
  const title = `${kind} with its shipped configuration, through a relay counting the sidecar's connections`;
  if (binary === undefined) {
    describe(title, () => {
      // Skipped only where the proxy binary is not installed (the title says which); CI installs
      // it (.ci/run), so there it runs.
      it.skip(`reuses its connections to the sidecar (${tool.missing})`, () => {});
    });
    continue;
  }

  describe(title, () => {
    const s = shippedPlaneThrough(shipped, binary, startCountingRelay);

    it(`routes ${REQUESTS} requests over at most ${MAX_ACCEPTED} connections to the sidecar`, async () => {
      const relay = s.between;
      const before = relay.accepted();
      const statuses = await load(s.port, HOSTS.ready, REQUESTS, CONCURRENCY);
      const accepted = relay.accepted() - before;
      expect(statuses).toEqual({ 200: REQUESTS });
      expect(accepted).toBeLessThanOrEqual(MAX_ACCEPTED);
    }, 60_000);
  });
}
