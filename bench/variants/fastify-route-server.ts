// Diagnostic only, not what ships: the data listener's route served by Fastify instead of plain
// node:http, with the same answers (the route answerer, every method, 404 `not-found` elsewhere).
// The devices suite builds the artifact with this module in place of src/route/route-server.ts
// to measure what Fastify would cost the data thread.

import type { Server } from "node:http";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { ERRORS } from "../../src/answers/reasons.ts";
import { routeAnswerer } from "../../src/answers/route-answer.ts";
import { isRoutePath, targetAuthority } from "../../src/route/route-path.ts";
import type { RouteServerOptions } from "../../src/route/route-server.ts";

/** `createRouteServer`'s contract, answered by a Fastify app; listens once the app is ready. */
export function createRouteServer(options: RouteServerOptions): Server {
  const answer = routeAnswerer(options.retryAfter);
  const counted = options.counted ?? (() => {});
  const route = (request: FastifyRequest, reply: FastifyReply): void => {
    const a = answer(
      options.view(),
      request.raw.rawHeaders,
      targetAuthority(request.raw.url ?? ""),
    );
    counted(a.outcome);
    const { "content-length": length, ...rest } = a.headers;
    reply
      .code(a.status)
      .headers(request.method === "HEAD" ? rest : { ...rest, "content-length": length })
      .send();
  };
  const app = Fastify({ logger: false, requestTimeout: 0, keepAliveTimeout: 0 });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  const viaFastify = { onRequest: route, handler: () => {} };
  app.all("/v1/route", viaFastify);
  app.all("/v1/route/*", viaFastify);
  app.setNotFoundHandler((request, reply) => {
    if (isRoutePath(request.raw.url ?? "")) route(request, reply);
    else
      reply
        .code(ERRORS["not-found"].status)
        .headers({ "x-mirror-reason": "not-found", "content-length": "0" })
        .send();
  });
  const server = app.server;
  const listen = server.listen.bind(server) as (...args: unknown[]) => Server;
  // The worker listens on the server it is given: the routes exist once the app is ready.
  server.listen = ((...args: unknown[]) => {
    void app.ready().then(() => listen(...args));
    return server;
  }) as Server["listen"];
  return server;
}
