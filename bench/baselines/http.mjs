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
server.listen(Number(process.argv[2]), "127.0.0.1", () => {
  // The bench warms the compile cache with one run that exits here (a killed process writes none).
  if (process.env.BENCH_WARM_ONLY === "1") process.exit(0);
});
