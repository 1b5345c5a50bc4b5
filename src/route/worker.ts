// The data thread (ADR 27): the data listener in a V8 isolate of its own, so that nothing else
// the process runs (the API-server client's sockets and streams, the ops listener, the Snapshot
// builds) shares the inline caches of Node's HTTP code with the data plane's requests. It
// answers from its view of the served Snapshot, which the main thread keeps current. Its bundle
// holds no Fastify, pino, zod or client-node.

import type { AddressInfo } from "node:net";
import { type MessagePort, parentPort } from "node:worker_threads";
import { keepTickRecord } from "../runtime/tick-record.ts";
import { STARTUP_COLLECTION_DELAY_MS, v8FullCollection } from "../runtime/v8-collection.ts";
import type { RouteView } from "../snapshot/types.ts";
import type { DataThreadSettings, FromDataThread, ToDataThread } from "./messages.ts";
import { RouteCounts } from "./route-counts.ts";
import { createRouteServer } from "./route-server.ts";
import { applyViewUpdate, type Routes, readRoutes } from "./view-update.ts";

/** Runs the data listener for the main thread at the other end of `port`. */
function runDataThread(port: MessagePort, settings: DataThreadSettings): void {
  const send = (message: FromDataThread) => port.postMessage(message);
  let view: RouteView | null = null;
  // Routes received and not yet used by a view, by id.
  const routes = new Map<number, Routes>();
  const counts = new RouteCounts(settings.counts);
  const server = createRouteServer({
    view: () => view,
    retryAfter: settings.retryAfter,
    counted: (outcome) => counts.add(outcome),
    failed: (e) => send({ type: "failed", message: e.message, stack: e.stack }),
  });

  port.on("message", (message: ToDataThread) => {
    switch (message.type) {
      case "start":
        return;
      case "routes":
        routes.set(message.routes.id, readRoutes(message.routes));
        return;
      case "view": {
        const { update } = message;
        const used = update.kind === "whole" ? routes.get(update.routes) : undefined;
        // The thread's share of the one full collection after start, after the main
        // thread's: each turns a process-wide V8 flag on for a moment.
        if (view === null) setTimeout(v8FullCollection, 2 * STARTUP_COLLECTION_DELAY_MS).unref();
        view = applyViewUpdate(view, update, used);
        // Routes as old as those of a whole view will never be used again.
        if (update.kind === "whole")
          for (const id of routes.keys()) if (id <= update.routes) routes.delete(id);
        send({ type: "applied", revision: view.revision });
        return;
      }
      case "close": {
        const cut = setTimeout(() => server.closeAllConnections(), message.drainMs);
        server.close(() => {
          clearTimeout(cut);
          send({ type: "closed" });
          port.close();
        });
        return;
      }
    }
  });

  server.once("error", (e) => {
    send({ type: "listen-failed", message: e.message });
    port.close();
  });
  server.listen(settings.listen.port, settings.listen.host, () => {
    send({ type: "listening", port: (server.address() as AddressInfo).port });
  });
}

// The worker boots before the main thread knows its settings (`spawnDataWorker`); its first
// message brings them. Its isolate has tick records of its own to keep alive.
if (parentPort !== null) {
  keepTickRecord();
  const port = parentPort;
  port.once("message", (message: ToDataThread) => {
    if (message.type === "start") runDataThread(port, message.settings);
  });
}
