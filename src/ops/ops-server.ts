import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import type { Metrics } from "./metrics.ts";

interface OpsServerOptions {
  readonly holder: SnapshotHolder;
  /**
   * Whether the data listener answers from a Snapshot. Default: once the holder has one; the
   * sidecar asks its data thread, which serves a Snapshot a moment after it is published.
   */
  readonly ready?: () => boolean;
  readonly metrics: Metrics;
  /** Where a failed `/metrics` is logged; default: nowhere. */
  readonly logger?: Logger | false;
}

const TEXT = "text/plain; charset=utf-8";
// Longer than the 60 s after which most clients drop an idle connection (Fastify's default, which
// this listener kept until ADR 28): the server never closes a connection a scraper is reusing.
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * The ops listener, reachable from the kubelet, so it serves nothing else: `/healthz` (200 while
 * the process runs), `/readyz` (503 until the data listener answers from a first Snapshot, then
 * 200 for good: a replica that lost the API server keeps serving its last Snapshot), `/metrics`;
 * GET and HEAD, a query ignored. Everything else is 404. No request body is read. Plain
 * `node:http` (ADR 28): it is up before Fastify is loaded. Not listening yet: the caller listens.
 */
export function createOpsServer(options: OpsServerOptions): Server {
  const { holder, metrics } = options;
  const ready = options.ready ?? (() => holder.current() !== null);
  const log = options.logger ?? false;

  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    const url = request.url ?? "/";
    const query = url.indexOf("?");
    const path = query === -1 ? url : url.slice(0, query);
    const served = request.method === "GET" || request.method === "HEAD";
    if (served && path === "/metrics") {
      metrics.registry.metrics().then(
        (text) => send(response, 200, metrics.registry.contentType, text),
        (e: unknown) => {
          if (log !== false) log.error({ err: e }, "metrics failed");
          send(response, 500, TEXT, "internal");
        },
      );
    } else if (served && path === "/healthz") {
      send(response, 200, TEXT, "ok");
    } else if (served && path === "/readyz") {
      const isReady = ready();
      send(response, isReady ? 200 : 503, TEXT, isReady ? "ok" : "not synced");
    } else {
      send(response, 404, TEXT, "not found");
    }
  };

  const server = createServer(answer);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}

/** One whole answer; a HEAD answer carries the headers of the GET and no body (Node drops it). */
function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, {
    "content-type": type,
    "content-length": String(Buffer.byteLength(body)),
  });
  response.end(body);
}
