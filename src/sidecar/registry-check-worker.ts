// The Registry check thread (ADR 88): checks each value it is sent with the main thread's own
// code and answers with what the main thread decodes cheaply. Its bundle holds the parser and
// zod, no Fastify, pino or client-node.

import { parentPort } from "node:worker_threads";
import { checkValue } from "../mirror/registry-checker.ts";
import { v8FullCollection } from "../runtime/start-up-collection.ts";
import { toRegistryColumns } from "../state/registry-columns.ts";
import type { CheckAnswer, CheckRequest } from "./registry-check-messages.ts";

function answer({ id, value, under }: CheckRequest): CheckAnswer {
  const { contentHash, parsed } = checkValue(value, under);
  if (!parsed.ok) return { id, contentHash, refused: parsed.error };
  const { registry, refused } = parsed.value;
  return { id, columns: toRegistryColumns({ under, contentHash, registry, refused }) };
}

if (parentPort !== null) {
  const port = parentPort;
  port.on("message", (request: CheckRequest) => {
    port.postMessage(answer(request));
    // A big value's check leaves this isolate's heap grown and full of garbage, which V8 keeps
    // while the thread idles (ADR 59): tens of MiB of RSS until the next Registry change.
    setImmediate(v8FullCollection);
  });
}
