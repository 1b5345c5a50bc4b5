// Baseline: a plain Fastify handler giving the answer a routed `/v1/route` gives (200, empty body,
// the three headers), and 200 on `/readyz`. Port from argv[2]. Plain JavaScript, nothing of the
// product imported, started with the same Node binary and V8 flags as the shipped artifact.
import Fastify from "fastify";
import { HEADERS } from "./answer.mjs";

const app = Fastify();
app.all("/v1/route", (_request, reply) => {
  reply.headers(HEADERS).send();
});
app.get("/readyz", (_request, reply) => {
  reply.send("ok");
});
await app.listen({ host: "127.0.0.1", port: Number(process.argv[2]) });
// The bench warms the compile cache with one run that exits here (a killed process writes none).
if (process.env.BENCH_WARM_ONLY === "1") process.exit(0);
