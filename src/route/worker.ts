// The data thread (ADR 27): the data listener in a V8 isolate of its own, so that nothing else
// the process runs (the API-server client's sockets and streams, Fastify's ops listener, the
// Snapshot builds) shares the inline caches of Node's HTTP code with the data plane's requests.
// It answers `/v1/route` from its view of the served Snapshot and hands every other request to
// the main thread's Fastify app. Its bundle holds no Fastify, pino, zod or client-node.

import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { type MessagePort, parentPort } from "node:worker_threads";
import { keepTickRecord } from "../runtime/tick-record.ts";
import { v8FullCollection } from "../runtime/v8-collection.ts";
import type { RouteView } from "../snapshot/types.ts";
import { answerClientError } from "./client-error.ts";
import type { DataThreadSettings, FromDataThread, ToDataThread } from "./messages.ts";
import { routeHandlers } from "./route.ts";
import { RouteCounts } from "./route-counts.ts";
import { isRoutePath } from "./route-path.ts";
import { applyViewUpdate, type Routes, readRoutes } from "./view-update.ts";

const INTERNAL_BODY = '{"error":"internal"}';

/** Runs the data listener for the main thread at the other end of `port`. */
function runDataThread(port: MessagePort, settings: DataThreadSettings): void {
  const send = (message: FromDataThread) => port.postMessage(message);
  let view: RouteView | null = null;
  // Routes received and not yet used by a view, by id.
  const routes = new Map<number, Routes>();
  const counts = new RouteCounts(settings.counts);
  const route = routeHandlers(
    { current: () => view },
    { routeAnswered: (outcome) => counts.add(outcome) },
    settings.retryAfter,
  );
  const waiting = new Map<number, ServerResponse>();
  let lastId = 0;

  const answerRoute = (request: IncomingMessage, response: ServerResponse): void => {
    try {
      route.node(request, response);
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      send({ type: "failed", message: error.message, stack: error.stack });
      if (!response.headersSent) {
        response.writeHead(500, {
          "content-type": "application/json; charset=utf-8",
          "content-length": String(INTERNAL_BODY.length),
        });
      }
      response.end(INTERNAL_BODY);
    }
  };

  // At debug, each route request is also reported, for the main thread's request log.
  const reportRoute = (request: IncomingMessage, response: ServerResponse): void => {
    const started = performance.now();
    answerRoute(request, response);
    send({
      type: "request",
      report: {
        method: request.method ?? "",
        url: request.url ?? "",
        host: request.headers.host,
        remoteAddress: request.socket.remoteAddress,
        remotePort: request.socket.remotePort,
        statusCode: response.statusCode,
        responseTime: performance.now() - started,
      },
    });
  };
  const onRoute = settings.reportRequests ? reportRoute : answerRoute;

  const forward = (request: IncomingMessage, response: ServerResponse): void => {
    const id = ++lastId;
    waiting.set(id, response);
    // A client gone before the answer: nothing is written for it.
    response.once("close", () => waiting.delete(id));
    send({
      type: "forward",
      id,
      request: {
        method: request.method ?? "GET",
        url: request.url ?? "/",
        rawHeaders: request.rawHeaders,
        remoteAddress: request.socket.remoteAddress,
        remotePort: request.socket.remotePort,
      },
    });
  };

  // requireHostHeader: without it, Node answers an HTTP/1.1 request lacking Host with a bare 400
  // of its own; the route answers it with `x-mirror-reason: bad-host` like every other.
  const server = createServer({ requireHostHeader: false }, (request, response) => {
    if (isRoutePath(request.url ?? "")) onRoute(request, response);
    else forward(request, response);
  });
  // No idle timeout on kept-alive connections (ADR 26): the data plane owns its pool, and a
  // socket timeout costs a timer refresh on every read and write of every request.
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.setTimeout(0);
  server.on("clientError", answerClientError);

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
        view = applyViewUpdate(view, update, used);
        // Routes as old as those of a whole view will never be used again.
        if (update.kind === "whole")
          for (const id of routes.keys()) if (id <= update.routes) routes.delete(id);
        send({ type: "applied", revision: view.revision });
        return;
      }
      case "answer": {
        const response = waiting.get(message.id);
        waiting.delete(message.id);
        if (response === undefined || response.destroyed) return;
        const { status, headers, body } = message.answer;
        response.writeHead(status, headers as OutgoingHttpHeaders);
        response.end(body);
        return;
      }
      case "collect": {
        const collected = v8FullCollection();
        send({ type: "collected", error: collected.ok ? null : collected.error });
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
// message brings them. Its isolate has tick records of its own to keep alive (ADR 21).
if (parentPort !== null) {
  keepTickRecord();
  const port = parentPort;
  port.once("message", (message: ToDataThread) => {
    if (message.type === "start") runDataThread(port, message.settings);
  });
}
