// Baseline: node plus the @kubernetes/client-node package index (every generated API model and
// client), then the same Fastify server as fastify.mjs. What an unbundled sidecar that imports the
// package as its README shows would pay before doing anything.
import "@kubernetes/client-node";

await import("./fastify.mjs");
