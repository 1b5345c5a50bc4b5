// The Registry check thread (ADR 88): checks each value it is sent with the main thread's own
// code and answers with what the main thread decodes cheaply. Its bundle holds the parser and
// zod, no Fastify, pino or client-node.

import { parentPort } from "node:worker_threads";
import { checkValue } from "../mirror/registry-checker.ts";
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
  // The main thread ends this thread once no check waits (registry-thread.ts): what a check
  // leaves on its heap goes with it.
  port.on("message", (request: CheckRequest) => port.postMessage(answer(request)));
}
