// Child process: the start-up baselines. Node starts, loads Fastify (and, with a second argument
// "client-node", @kubernetes/client-node as the sidecar does for its kubeconfig) and answers 200
// on `/readyz` at the port given as the first argument, with no mirror behind it.
import Fastify from "fastify";

if (process.argv[3] === "client-node") await import("@kubernetes/client-node");
const app = Fastify();
app.get("/readyz", (_request, reply) => reply.send("ok"));
await app.listen({ host: "127.0.0.1", port: Number(process.argv[2]) });
