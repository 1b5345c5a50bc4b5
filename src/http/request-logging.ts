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

type LoggingOptions = Pick<
  FastifyServerOptions,
  "logger" | "loggerInstance" | "logController" | "childLoggerFactory"
>;

/**
 * Fastify's logging options for a listener: none when `logger` is false; else that logger, with a
 * line per request only when it logs at debug or lower. Without per-request lines, requests log
 * through the listener's logger itself: a per-request child would cost an allocation on the hot
 * path for bindings nothing reads.
 */
export function loggingOptions(logger: Logger | false): LoggingOptions {
  if (logger === false) return { logger: false };
  const perRequest = logger.isLevelEnabled("debug");
  return {
    loggerInstance: logger as FastifyBaseLogger,
    logController: new DebugRequestLog({ disableRequestLogging: !perRequest }),
    ...(perRequest ? {} : { childLoggerFactory: (parent: FastifyBaseLogger) => parent }),
  };
}
