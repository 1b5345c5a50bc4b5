// Diagnostic only, not what ships: the sidecar's data server (`createDataServer`) alone, in its
// own process from the TypeScript sources, over a Snapshot of the bench's Registry parsed from its
// gzip bytes, with metrics and an info-level logger (to /dev/null) as `serve` runs it; no watches,
// no ops listener. Usage: route-server.ts PORT APPS. Answers `/readyz` 200 once listening.

import pino from "pino";
import { createDataServer } from "../src/http/data-server.ts";
import { createMetrics } from "../src/http/metrics.ts";
import { SnapshotHolder } from "../src/snapshot/holder.ts";
import { snapshotFor } from "./fixtures.ts";

const [port, apps, valueBytes = 1024] = process.argv.slice(2).map(Number) as [
  number,
  number,
  number?,
];
const holder = new SnapshotHolder();
holder.swap(snapshotFor(apps, valueBytes));
const logger = pino({ level: "info" }, pino.destination("/dev/null"));
const app = createDataServer({ holder, logger, metrics: createMetrics() });
app.get("/readyz", (_request, reply) => {
  reply.send("ok");
});
await app.listen({ host: "127.0.0.1", port });
