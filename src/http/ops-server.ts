import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import { ignoreBodies } from "./ignore-bodies.ts";
import type { Metrics } from "./metrics.ts";
import { loggingOptions } from "./request-logging.ts";

interface OpsServerOptions {
  readonly holder: SnapshotHolder;
  /**
   * Whether the data listener answers from a Snapshot. Default: once the holder has one; the
   * sidecar asks its data thread, which serves a Snapshot a moment after it is published.
   */
  readonly ready?: () => boolean;
  readonly metrics: Metrics;
  /** Defaults to no logging; a logger at debug or lower also logs a line per request. */
  readonly logger?: Logger | false;
}

/**
 * The ops listener, reachable from the kubelet, so it serves nothing else: `/healthz` (200 while
 * the process runs), `/readyz` (503 until the data listener answers from a first Snapshot, then
 * 200 for good: a replica that lost the API server keeps serving its last Snapshot), `/metrics`.
 * Everything else is 404. Not listening yet: the caller calls `listen`.
 */
export function createOpsServer(options: OpsServerOptions): FastifyInstance {
  const { holder, metrics } = options;
  const ready = options.ready ?? (() => holder.current() !== null);
  const app = Fastify(loggingOptions(options.logger ?? false));
  ignoreBodies(app);

  app.get("/healthz", (_request, reply) => reply.type("text/plain; charset=utf-8").send("ok"));
  app.get("/readyz", (_request, reply) =>
    !ready()
      ? reply.code(503).type("text/plain; charset=utf-8").send("not synced")
      : reply.type("text/plain; charset=utf-8").send("ok"),
  );
  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).type("text/plain; charset=utf-8").send("not found"),
  );
  return app;
}
