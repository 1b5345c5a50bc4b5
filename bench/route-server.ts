// Diagnostic only, not what ships: the sidecar's data thread (ADR 27) alone, in its own process
// from the TypeScript sources, serving a Snapshot of the bench's Registry parsed from its gzip
// bytes, with metrics and an info-level logger (to /dev/null) as `serve` runs it; no watches, no
// ops listener. Usage: route-server.ts PORT APPS. Answers `/readyz` 200 once serving (forwarded
// to the data listener's Fastify app, like any path but the route).

import pino from "pino";
import { DEFAULT_RETRY_AFTER } from "../src/answers/route-answer.ts";
import { createDataServer } from "../src/ops/data-server.ts";
import { createMetrics } from "../src/ops/metrics.ts";
import { startDataThread } from "../src/route/data-thread.ts";
import { answerForwarded } from "../src/route/forward.ts";
import { SnapshotHolder } from "../src/snapshot/holder.ts";
import { snapshotFor } from "./fixtures.ts";

const [port, apps, valueBytes = 1024] = process.argv.slice(2).map(Number) as [
  number,
  number,
  number?,
];
const holder = new SnapshotHolder();
const snapshot = snapshotFor(apps, valueBytes);
holder.swap(snapshot);
const logger = pino({ level: "info" }, pino.destination("/dev/null"));
const metrics = createMetrics();
const app = createDataServer({ holder, logger, metrics });
app.get("/readyz", (_request, reply) => {
  reply.send("ok");
});
const thread = startDataThread({
  listen: { host: "127.0.0.1", port },
  retryAfter: DEFAULT_RETRY_AFTER,
  counts: metrics.routeCounts,
  logger,
  forward: (request) => answerForwarded(app, request),
});
const listening = await thread.listening;
if (!listening.ok) throw new Error(listening.error);
thread.publish(snapshot);
await thread.serving(snapshot.revision);
