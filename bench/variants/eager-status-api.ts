// Diagnostic only, not what ships: the status API's Fastify app built with the ops listener, at
// start, instead of once the first Snapshot is published (the devices suite builds the artifact
// with this module in place of src/ops/ops-server.ts).

import { createOpsServer as createShipped, type OpsServer } from "../../src/ops/ops-server.ts";

/** The shipped ops server, its status API built at once. */
export function createOpsServer(options: Parameters<typeof createShipped>[0]): OpsServer {
  const server = createShipped(options);
  server.startStatusApi();
  return server;
}
