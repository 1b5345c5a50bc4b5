import { createServer } from "node:http";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Logger } from "pino";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import { ignoreBodies } from "./ignore-bodies.ts";
import { ERRORS } from "./reasons.ts";
import { loggingOptions } from "./request-logging.ts";
import { type RouteMetrics, routeHandlers } from "./route.ts";
import { DEFAULT_RETRY_AFTER, type RetryAfterSeconds } from "./route-answer.ts";
import { registerStatusApi } from "./status-api.ts";

interface DataServerOptions {
  readonly holder: SnapshotHolder;
  /** False: no logging. A logger at debug or lower also logs a line per request. */
  readonly logger: Logger | false;
  readonly metrics?: RouteMetrics;
  /** Defaults to `DEFAULT_RETRY_AFTER`: 1 s for not-synced, 5 s for secret-unavailable. */
  readonly retryAfterSeconds?: RetryAfterSeconds;
}

// Hostnames are at most 253 characters: a parameter up to this length still reaches its handler,
// which answers 400 bad-host (or 404 unknown-app) rather than the router's generic 404.
const MAX_PARAM_LENGTH = 1024;

/**
 * The data listener: `ANY /v1/route[/*]` for the data plane, and the lookup and status API.
 * Not listening yet: the caller calls `listen`. No request body is ever read: the route answers
 * before the body is parsed, and no other route accepts one.
 */
export function createDataServer(options: DataServerOptions): FastifyInstance {
  const retryAfter = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER;
  const route = routeHandlers(options.holder, options.metrics, retryAfter);
  const answer = route.fastify;
  const answerError = errorAnswerer(options.logger);
  const logging = loggingOptions(options.logger);
  // Fastify's routing, hooks and reply cost more per request than the whole route answer, so the
  // data plane's requests skip them and are answered on Node's request and response (the same
  // status and headers). With per-request logging on (debug), everything goes through Fastify.
  const direct = logging.logger === false;
  const app = Fastify({
    ...logging,
    serverFactory: (fastifyHandler, settings) => {
      // requireHostHeader: without it, Node answers an HTTP/1.1 request lacking Host with a bare
      // 400 of its own; the route answers it with `x-mirror-reason: bad-host` like every other.
      const server = createServer({ requireHostHeader: false }, (request, response) => {
        if (direct && isRoutePath(request.url ?? "")) route.node(request, response);
        else fastifyHandler(request, response);
      });
      // What Fastify sets on a server it creates itself (its defaults once it has resolved them).
      server.keepAliveTimeout = numberOr(settings.keepAliveTimeout, 72_000);
      server.requestTimeout = numberOr(settings.requestTimeout, 0);
      server.setTimeout(numberOr(settings.connectionTimeout, 0));
      return server;
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // While closing, requests already on a kept-alive connection are still answered from the
    // last Snapshot rather than with Fastify's bare 503, which carries no x-mirror-reason.
    return503OnClosing: false,
    // A path the router cannot decode (`/v1/route/%zz`, forwarded by Envoy's path_prefix from a
    // client) still gets a route answer: the answer depends on the host, never on the path.
    frameworkErrors: (error, request, reply) => {
      if (isRoutePath(request.raw.url ?? "")) answer(request, reply);
      else answerError(error, request, reply);
    },
  });
  ignoreBodies(app);

  // Answered in onRequest, before Fastify looks at the body: a POST with an odd content type,
  // or a large chunked upload, is answered like a GET, and the body is never buffered.
  const viaFastify = { onRequest: answer, handler: () => {} };
  app.all("/v1/route", viaFastify);
  app.all("/v1/route/*", viaFastify);

  registerStatusApi(app, options.holder, retryAfter);

  // Fastify routes only the methods it knows; Node parses more (PROPFIND, REPORT, PURGE, ...),
  // and Envoy's ext_authz forwards the client's method as it is. The route answers them all.
  app.setNotFoundHandler((request, reply) => {
    if (isRoutePath(request.raw.url ?? "")) answer(request, reply);
    else reply.code(ERRORS["not-found"].status).send({ error: "not-found" });
  });
  app.setErrorHandler(answerError);
  return app;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" ? value : fallback;
}

/** Whether a raw request target (origin or absolute form) names `/v1/route` or `/v1/route/*`. */
function isRoutePath(url: string): boolean {
  const start = url.startsWith("/") ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1 || !url.startsWith("/v1/route", start)) return false;
  const next = url.charAt(start + "/v1/route".length);
  return next === "" || next === "/" || next === "?" || next === "#";
}

/**
 * Fastify's own errors (a bad URL, an unsupported media type) as `bad-request`; the rest are bugs,
 * logged at error through the listener's logger (Fastify has none below debug: see
 * `loggingOptions`).
 */
function errorAnswerer(
  logger: Logger | false,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return function answerError(error, request, reply) {
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      reply.code(ERRORS["bad-request"].status).send({ error: "bad-request" });
      return;
    }
    if (logger !== false) logger.error({ reqId: request.id, err: error }, "request failed");
    reply.code(ERRORS.internal.status).send({ error: "internal" });
  };
}
