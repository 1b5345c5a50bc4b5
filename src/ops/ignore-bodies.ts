import type { FastifyInstance } from "fastify";

/**
 * Replaces every content-type parser with one that leaves the body unread, so no request body is
 * ever buffered (Fastify's defaults would read JSON and text up to 1 MiB, even for a 404). Node
 * drains and drops an unread body after the answer, keeping the connection usable.
 */
export function ignoreBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
}
