// Child process: one HTTP server for the routing figure, on 127.0.0.1 and an ephemeral port.
//   fastify  a bare Fastify handler answering 200 with the three headers a routed answer has
//   http     the same answer from bare node:http
//   mirror   the sidecar's data server (createDataServer) over a Snapshot of a 10k-App Registry,
//            parsed from its gzip bytes, with metrics and an info-level logger (to /dev/null) as
//            `serve` runs it
// Sends its port over IPC, then answers each "cpu" message with the CPU microseconds used since
// the previous one, so the parent can divide server CPU by requests served.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import pino from "pino";
import { createDataServer } from "../src/http/data-server.ts";
import { createMetrics } from "../src/http/metrics.ts";
import { parseRegistry } from "../src/registry/parse.ts";
import { build } from "../src/snapshot/build.ts";
import { SnapshotHolder } from "../src/snapshot/holder.ts";
import { registryBytes, secretsFor } from "./fixtures.ts";

export type RouteServerKind = "fastify" | "http" | "mirror";

const HEADERS = {
  "x-mirror-app": "app-1",
  "x-mirror-upstream": "http://app-1.tenant-1.svc.cluster.local:8080",
  "x-mirror-revision": "1",
};

async function listen(kind: RouteServerKind, apps: number): Promise<number> {
  if (kind === "http") {
    const server = createServer((_request, response) => {
      response.writeHead(200, HEADERS);
      response.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return (server.address() as AddressInfo).port;
  }
  if (kind === "fastify") {
    const app = Fastify();
    app.all("/v1/route", (_request, reply) => {
      reply.headers(HEADERS).send();
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    return (app.server.address() as AddressInfo).port;
  }
  const parsed = parseRegistry(registryBytes(apps, true), { defaultNamespace: "default" });
  if (!parsed.ok) throw new Error(parsed.error.message);
  const holder = new SnapshotHolder();
  holder.swap(
    build(parsed.value, secretsFor(apps), {
      revision: 1,
      builtAt: Date.now(),
      registry: { present: true, resourceVersion: "1", error: null },
    }),
  );
  const logger = pino({ level: "info" }, pino.destination("/dev/null"));
  const app = createDataServer({ holder, logger, metrics: createMetrics() });
  await app.listen({ host: "127.0.0.1", port: 0 });
  return (app.server.address() as AddressInfo).port;
}

const [kind, apps] = process.argv.slice(2);
const port = await listen(kind as RouteServerKind, Number(apps));
let cpu = process.cpuUsage();
process.on("message", () => {
  const used = process.cpuUsage(cpu);
  cpu = process.cpuUsage();
  process.send?.(used.user + used.system);
});
process.on("disconnect", () => process.exit(0));
process.send?.(port);
