import type { FastifyInstance } from "fastify";
import inject, { type InjectOptions } from "light-my-request";
import type { ForwardedAnswer, ForwardedRequest } from "./messages.ts";

// The data thread never reads a forwarded body, so Fastify is not told of one; and the thread's
// own response frames the answer and manages the connection.
const REQUEST_HEADERS_DROPPED = new Set(["content-length", "transfer-encoding"]);
const ANSWER_HEADERS_DROPPED = new Set(["transfer-encoding", "connection", "keep-alive", "date"]);

/**
 * Answers a request the data thread forwarded, as `app.inject()` would but with the target
 * exactly as it came on the wire: the same method, target and header lines (repeated names as
 * repeated lines), no body. The answer is Fastify's status, headers (its `content-length` too,
 * which a HEAD answer needs) and body; `date` and the connection headers are left for the data
 * thread's own response to write, as for any answer.
 */
export async function answerForwarded(
  app: FastifyInstance,
  request: ForwardedRequest,
): Promise<ForwardedAnswer> {
  const headers: Record<string, string | string[]> = Object.create(null);
  const { rawHeaders } = request;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (REQUEST_HEADERS_DROPPED.has(name)) continue;
    const value = rawHeaders[i + 1]!;
    const before = headers[name];
    headers[name] =
      before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  await app.ready();
  // The injected request's URL is set only once it is built: the injector resolves the URL it is
  // given as a WHATWG URL, which turns `\` into `/`, resolves dot segments and throws on
  // `/\%nB`, where the app, over a socket, routes the target as written.
  const { url } = request;
  const response = await inject(
    (req, res) => {
      req.url = url;
      app.routing(req, res);
    },
    {
      method: request.method as InjectOptions["method"],
      url: "/",
      headers,
      ...(request.remoteAddress === undefined ? {} : { remoteAddress: request.remoteAddress }),
    },
  );
  const answerHeaders: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined || ANSWER_HEADERS_DROPPED.has(name)) continue;
    answerHeaders[name] = typeof value === "number" ? String(value) : value;
  }
  return { status: response.statusCode, headers: answerHeaders, body: response.rawPayload };
}
