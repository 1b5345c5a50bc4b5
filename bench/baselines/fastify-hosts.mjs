// Baseline: the answers a routed `/v1/route` gives, per host, from a plain Fastify handler and a
// Map: the same 200 and three headers as the sidecar for every host of the bench's Registry.
// The route suite's second yardstick: fastify.mjs answers every host with one constant set of
// headers and so never looks a host up. Port from argv[2], the answers (a JSON object of host to
// headers) from the file named in argv[3]. Plain JavaScript, nothing of the product imported.
import { readFileSync } from "node:fs";
import Fastify from "fastify";

const answers = new Map(Object.entries(JSON.parse(readFileSync(process.argv[3], "utf8"))));
const app = Fastify();
app.all("/v1/route", (request, reply) => {
  const headers = answers.get(request.headers.host);
  if (headers === undefined) reply.code(404).send();
  else reply.headers(headers).send();
});
app.get("/readyz", (_request, reply) => {
  reply.send("ok");
});
await app.listen({ host: "127.0.0.1", port: Number(process.argv[2]) });
// The bench warms the compile cache with one run that exits here (a killed process writes none).
if (process.env.BENCH_WARM_ONLY === "1") process.exit(0);
