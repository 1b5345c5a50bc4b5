// The data thread (ADR 32): the data listener in a V8 isolate of its own, so that nothing else
// the process runs (the API-server client's sockets and streams, the ops listener, the Snapshot
// builds) shares the inline caches of Node's HTTP code with the data plane's requests. It
// answers from its view of the served Snapshot, which the main thread keeps current. Its bundle
// holds no Fastify, pino, zod or client-node.

import type { AddressInfo } from "node:net";
import { type MessagePort, parentPort } from "node:worker_threads";
import { systemClock } from "../clock.ts";
import {
  collectOnce,
  DATA_THREAD_DELAY_MS,
  v8FullCollection,
} from "../runtime/start-up-collection.ts";
import type { RouteView } from "../snapshot/types.ts";
import { HEARTBEAT_INTERVAL_MS, Heartbeat } from "./heartbeat.ts";
import type { DataThreadSettings, FromDataThread, ToDataThread } from "./messages.ts";
import { RouteCounts } from "./route-counts.ts";
import { createRouteServer } from "./route-server.ts";
import { applyViewUpdate, type Routes, readRoutes } from "./view-update.ts";

/** Connections closed at the cap are reported at most this often. */
const EVICTION_REPORT_MS = 10_000;

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
    limits: settings.limits,
    evicted: evictionReporter(send),
  });
  const heartbeat = new Heartbeat(settings.heartbeat);
  heartbeat.beat();
  const beats = setInterval(() => heartbeat.beat(), HEARTBEAT_INTERVAL_MS);
  beats.unref();

  // The thread's share of the collection after start: its heap is its own isolate's.
  const collection = collectOnce({
    clock: systemClock,
    delayMs: DATA_THREAD_DELAY_MS,
    collect: v8FullCollection,
    report: (released) => send({ type: "collected", released }),
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
        collection.due();
        view = applyViewUpdate(view, update, used);
        // Routes as old as those of a whole view will never be used again.
        if (update.kind === "whole")
          for (const id of routes.keys()) if (id <= update.routes) routes.delete(id);
        send({ type: "applied", revision: view.revision });
        return;
      }
      case "close": {
        clearInterval(beats);
        collection.cancel();
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

  const listenFailed = (e: Error): void => {
    send({ type: "listen-failed", message: e.message });
    port.close();
  };
  server.once("error", listenFailed);
  server.listen(settings.listen.port, settings.listen.host, () => {
    server.off("error", listenFailed);
    // Any later error of the listening socket (EMFILE on accept, say) leaves a listener that
    // may answer from a view nobody updates any more: it ends the thread, which ends the process.
    server.on("error", (e) => {
      throw new Error(`data listener error: ${e.message}`, { cause: e });
    });
    send({ type: "listening", port: (server.address() as AddressInfo).port });
  });
}

/** Reports connections closed at the cap: the first at once, then counts every few seconds. */
function evictionReporter(send: (message: FromDataThread) => void): (idle: boolean) => void {
  let idle = 0;
  let midRequest = 0;
  let window: NodeJS.Timeout | null = null;
  const report = (): void => {
    window = null;
    if (idle + midRequest === 0) return;
    send({ type: "evicted", idle, midRequest });
    idle = 0;
    midRequest = 0;
    window = setTimeout(report, EVICTION_REPORT_MS);
    window.unref();
  };
  return (wasIdle) => {
    if (wasIdle) idle++;
    else midRequest++;
    if (window === null) report();
  };
}

// The worker boots before the main thread knows its settings (`spawnDataWorker`); its first
// message brings them.
if (parentPort !== null) {
  const port = parentPort;
  port.once("message", (message: ToDataThread) => {
    if (message.type === "start") runDataThread(port, message.settings);
  });
}
