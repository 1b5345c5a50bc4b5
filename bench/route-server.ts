// Diagnostic only, not what ships: the sidecar's data thread (ADR 27) alone, in its own process
// from the TypeScript sources, serving a Snapshot of the bench's Registry parsed from its gzip
// bytes, with metrics and an info-level logger (to /dev/null) as `serve` runs it; no watches, no
// ops listener. Usage: route-server.ts PORT OPS_PORT APPS. Answers `/readyz` 200 on OPS_PORT once
// serving.

import { createServer } from "node:http";
import pino from "pino";
import { startTestDataThread } from "../test/support/data-thread.ts";
import { snapshotFor } from "./fixtures.ts";

const [port, opsPort, apps, valueBytes = 1024] = process.argv.slice(2).map(Number) as [
  number,
  number,
  number,
  number?,
];
const snapshot = snapshotFor(apps, valueBytes);
const logger = pino({ level: "info" }, pino.destination("/dev/null"));
await startTestDataThread(snapshot, logger, { listen: { host: "127.0.0.1", port } });
createServer((_request, response) => response.end("ok")).listen(opsPort, "127.0.0.1");
