import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Logger } from "pino";
import { ERRORS } from "../answers/reasons.ts";
import type { RetryAfterSeconds } from "../answers/route-answer.ts";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import { ignoreBodies } from "./ignore-bodies.ts";
import type { ProxyRecord } from "./records.ts";
import { loggingOptions } from "./request-logging.ts";
import { registerStatusApi } from "./status-api.ts";

export interface StatusAppOptions {
  readonly holder: SnapshotHolder;
  /** False: no logging. A logger at debug or lower also logs a line per request. */
  readonly logger: Logger | false;
  readonly retryAfter: RetryAfterSeconds;
  /** Zero-hop: each proxy and the revision it answers from, for `/v1/snapshot`; default: none. */
  readonly proxies?: () => readonly ProxyRecord[];
}

// Hostnames are at most 253 characters: a parameter up to this length still reaches its handler,
// which answers 400 bad-host (or 404 unknown-app) rather than the router's generic 404.
const MAX_PARAM_LENGTH = 1024;

/**
 * The lookup and status API as a Fastify app (README, "Lookup and status API"): `/v1/hosts/:host`,
 * `/v1/apps`, `/v1/apps/:name`, `/v1/snapshot`; every other path 404 `not-found`. It never
 * listens itself: the ops listener hands it the requests that are not probes or metrics
 * (`routing`), and tests drive it through `app.inject`. No request body is ever read.
 */
export function createStatusApp(options: StatusAppOptions): FastifyInstance {
  const answerError = errorAnswerer(options.logger);
  const app = Fastify({
    ...loggingOptions(options.logger),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: answerError,
  });
  ignoreBodies(app);
  registerStatusApi(app, options.holder, options.retryAfter, options.proxies ?? (() => []));
  app.setNotFoundHandler((_request, reply) => {
    reply.code(ERRORS["not-found"].status).send({ error: "not-found" });
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
