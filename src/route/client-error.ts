import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";

/**
 * Answers a request Node's parser refused, as Fastify's default `clientError` handler does (the
 * data listener answered with Fastify's before it had a thread of its own, and data planes and
 * the fuzz oracle rely on those bytes): 431 for headers over the limit, 408 for a request
 * timeout, else 400, each with a fixed JSON body; then the connection closes. A reset
 * connection gets nothing.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, message] =
    error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? [408, "Client Timeout"]
      : error.code === "HPE_HEADER_OVERFLOW"
        ? [431, "Exceeded maximum allowed HTTP header size"]
        : [400, "Client Error"];
  const reason = STATUS_CODES[status]!;
  const body = `{"error":"${reason}","message":"${message}","statusCode":${status}}`;
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
