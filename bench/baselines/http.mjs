// Baseline: the same answer as fastify.mjs from bare node:http (no router, no hooks).
import { createServer } from "node:http";
import { HEADERS } from "./answer.mjs";

const server = createServer((request, response) => {
  if (request.url === "/readyz") {
    response.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    response.end("ok");
    return;
  }
  response.writeHead(200, HEADERS);
  response.end();
});
server.listen(Number(process.argv[2]), "127.0.0.1");
