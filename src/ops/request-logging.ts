import {
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import type { Logger } from "pino";

/** Fastify's per-request lines at debug level, so they appear exactly when debug is on. */
class DebugRequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, "incoming request");
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ res: reply, err: error }, "request errored");
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, "request completed");
  }
}

type LoggingOptions = Pick<FastifyServerOptions, "logger" | "loggerInstance" | "logController">;

/**
 * Fastify's logging options for a listener: a line per request when `logger` logs at debug or
 * lower; otherwise Fastify gets no logger at all, and the listener logs what it must (bugs)
 * through `logger` itself. Given a logger, Fastify times every request and adds and removes two
 * listeners on every response to report its completion, even with request logging disabled: on
 * `/v1/route` that was the largest cost the data path added to a bare handler (`npm run bench:profile`).
 */
export function loggingOptions(logger: Logger | false): LoggingOptions {
  if (logger === false || !logger.isLevelEnabled("debug")) return { logger: false };
  return {
    loggerInstance: logger as FastifyBaseLogger,
    logController: new DebugRequestLog({ disableRequestLogging: false }),
  };
}
