import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { RetryAfterSeconds } from "../answers/route-answer.ts";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import { ConnectionLedger } from "./connection-ledger.ts";
import { isLoopbackPeer } from "./loopback-peer.ts";
import type { Metrics } from "./metrics.ts";
import { createStatusApp, type StatusAppOptions } from "./status-app.ts";

interface OpsServerOptions {
  readonly holder: SnapshotHolder;
  /**
   * Whether the data listener answers from a Snapshot. Default: once the holder has one; the
   * sidecar asks its data thread, which serves a Snapshot a moment after it is published.
   */
  readonly ready?: () => boolean;
  /** Whether the data listener still answers (its thread's heartbeat); default: always. */
  readonly answering?: () => boolean;
  /** Whether the sidecar is shutting down: /readyz answers 503 from then on; default: never. */
  readonly stopping?: () => boolean;
  readonly metrics: Metrics;
  readonly retryAfter: RetryAfterSeconds;
  /** Where failures are logged, and the status API's request log at debug; default: nowhere. */
  readonly logger?: Logger | false;
  /** Zero-hop: each proxy and the revision it answers from; default: none. */
  readonly proxies?: StatusAppOptions["proxies"];
  /** Whether the status API answers peers off loopback (`--allow-remote-status-api`); default: no. */
  readonly allowRemoteStatusApi?: boolean;
  /** Tests: the status API's app, not yet ready; default: `createStatusApp`'s. */
  readonly statusApp?: FastifyInstance;
}

/** The ops listener, and the status API it serves. */
export interface OpsServer {
  /** Not listening yet: the caller listens. */
  readonly server: Server;
  /** Closes the status API; the server is the caller's to close. */
  closeStatusApi(): Promise<void>;
}

const TEXT = "text/plain; charset=utf-8";
// Longer than the 60 s after which most clients drop an idle connection: the server never
// closes a connection a scraper is reusing.
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
// Probes, scrapes and an operator's status API calls: a few connections at a time, and a cap far
// above them so that a flood costs bounded memory. At the cap a newcomer still gets in and the
// connection idle longest is closed (ADR 47): the probes are never kept out.
const MAX_CONNECTIONS = 128;
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
// The headers and request timeouts' granularity; the main thread sleeps between checks.
const CHECK_INTERVAL_MS = 5_000;
const REMOTE_DENIED = "the status API answers loopback peers only (--allow-remote-status-api)";
const ROUTED_DENIED = "the status API does not answer a request a data plane routed (x-mirror-app)";

/**
 * The ops listener, reachable from the kubelet and Prometheus: `/healthz` (200 while the data
 * listener answers, 503 once its thread stopped turning), `/readyz` (503 until the data listener
 * answers from a first Snapshot, then 200 until shutdown begins: a replica that lost the API
 * server keeps serving its last Snapshot), `/metrics` (GET and
 * HEAD, a query ignored), answered here, to any peer; every other request goes to the lookup and
 * status API, a Fastify app (`createStatusApp`) built with the listener, that routes it through
 * its public `routing`. Unless `allowRemoteStatusApi`, those requests from a peer off
 * loopback are answered 403 here, and never reach the app. No body is read.
 */
export function createOpsServer(options: OpsServerOptions): OpsServer {
  const { holder, metrics } = options;
  const ready = options.ready ?? (() => holder.current() !== null);
  const answering = options.answering ?? (() => true);
  const stopping = options.stopping ?? (() => false);
  const log = options.logger ?? false;
  const allowRemote = options.allowRemoteStatusApi ?? false;
  const statusApp =
    options.statusApp ??
    createStatusApp({
      holder,
      logger: log,
      retryAfter: options.retryAfter,
      ...(options.proxies === undefined ? {} : { proxies: options.proxies }),
    });
  const built = new Promise<FastifyInstance>((resolve, reject) => {
    statusApp.ready((e) => (e ? reject(e) : resolve(statusApp)));
  });
  // A failure is answered and logged on the first request that needs the app.
  built.catch(() => {});
  let failureLogged = false;

  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    const url = request.url ?? "/";
    const query = url.indexOf("?");
    const path = query === -1 ? url : url.slice(0, query);
    const probe = request.method === "GET" || request.method === "HEAD";
    if (probe && path === "/metrics") {
      metrics.registry.metrics().then(
        (text) => send(response, 200, metrics.registry.contentType, text),
        (e: unknown) => {
          if (log !== false) log.error({ err: e }, "metrics failed");
          send(response, 500, TEXT, "internal");
        },
      );
    } else if (probe && path === "/healthz") {
      if (answering()) send(response, 200, TEXT, "ok");
      else send(response, 503, TEXT, "data listener not answering");
    } else if (probe && path === "/readyz") {
      if (stopping()) send(response, 503, TEXT, "shutting down");
      else if (ready()) send(response, 200, TEXT, "ok");
      else send(response, 503, TEXT, "not synced");
    } else if (!allowRemote && !isLoopbackPeer(request.socket.remoteAddress)) {
      // App names, hostnames and upstreams of every tenant: for an operator in the pod
      // (`kubectl port-forward`, `kubectl exec`), not for every pod that reaches the port.
      send(response, 403, TEXT, REMOTE_DENIED);
    } else if (request.headers["x-mirror-app"] !== undefined) {
      // Every shipped data plane sets x-mirror-app on the requests it routes, after dropping the
      // client's: an App whose upstream name resolves to this pod reaches the port from
      // loopback, and its clients must not read the status API through it.
      send(response, 403, TEXT, ROUTED_DENIED);
    } else {
      built.then(
        (app) => app.routing(request, response),
        (e: unknown) => {
          // A status API that fails to start is a bug, logged once; the probes and /metrics
          // still answer.
          if (!failureLogged && log !== false) log.error({ err: e }, "status API failed to start");
          failureLogged = true;
          send(response, 500, TEXT, "internal");
        },
      );
    }
  };

  const server = createServer({
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: CHECK_INTERVAL_MS,
  });
  // Before `answer`: a request is in flight from before its answer is written.
  capConnections(server, MAX_CONNECTIONS);
  server.on("request", answer);
  return {
    server,
    closeStatusApi: async () => {
      await built.catch(() => undefined);
      await statusApp.close();
    },
  };
}

/**
 * Holds `server` to `cap` connections by closing, for each one accepted past it, the one the
 * ledger names: at most `cap` stay open, however fast they come.
 */
function capConnections(server: Server, cap: number): void {
  const ledger = new ConnectionLedger<Socket>(cap);
  server.on("connection", (socket: Socket) => {
    ledger.open(socket)?.destroy();
    socket.once("close", () => ledger.closed(socket));
  });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request;
    ledger.requestStarted(socket);
    // 'close' follows the last byte written, or the connection's end: either way it is done.
    response.once("close", () => ledger.requestEnded(socket));
  });
}

/** One whole answer; a HEAD answer carries the headers of the GET and no body (Node drops it). */
function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, {
    "content-type": type,
    "content-length": String(Buffer.byteLength(body)),
  });
  response.end(body);
}
