import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Logger } from "pino";
import { ERRORS } from "../answers/reasons.ts";
import { DEFAULT_RETRY_AFTER, type RetryAfterSeconds } from "../answers/route-answer.ts";
import { type RouteMetrics, routeHandlers } from "../route/route.ts";
import { isRoutePath } from "../route/route-path.ts";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import { ignoreBodies } from "./ignore-bodies.ts";
import { loggingOptions } from "./request-logging.ts";
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
 * The data listener's Fastify app: `ANY /v1/route[/*]` and the lookup and status API. The data
 * thread answers `/v1/route` itself and forwards every other request here (ADR 27); `inject()`
 * reaches all of it. No request body is ever read: the route answers before the body is parsed,
 * and no other route accepts one.
 */
export function createDataServer(options: DataServerOptions): FastifyInstance {
  const retryAfter = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER;
  const answer = routeHandlers(options.holder, options.metrics, retryAfter).fastify;
  const answerError = errorAnswerer(options.logger);
  const app = Fastify({
    ...loggingOptions(options.logger),
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
