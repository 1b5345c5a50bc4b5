import { type ResourceLimits, Worker } from "node:worker_threads";

// The bundle defines this as the built worker's file, beside the chunk that holds this module
// (scripts/build.ts); the sources start the TypeScript entry.
declare const REPLICA_MIRROR_DATA_THREAD: string | undefined;
const ENTRY = new URL(
  typeof REPLICA_MIRROR_DATA_THREAD === "string" ? REPLICA_MIRROR_DATA_THREAD : "./worker.ts",
  import.meta.url,
);

/**
 * Starts a data thread's worker, which boots and then waits for `startDataThread` to give it its
 * settings. Spawned as early as the CLI knows it will serve, so that its boot overlaps the main
 * thread loading its own code. Unreferenced until started: a `serve` that fails before
 * starting its sidecar still exits.
 */
export function spawnDataWorker(resourceLimits?: ResourceLimits): Worker {
  const worker = new Worker(ENTRY, resourceLimits === undefined ? {} : { resourceLimits });
  worker.unref();
  return worker;
}
