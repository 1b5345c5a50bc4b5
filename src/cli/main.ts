#!/usr/bin/env node
// The entry point. Before the rest is loaded it turns on V8's compile cache (start-up is mostly
// loading code, and a warm cache skips compiling it), keeps one nextTick record alive (ADR 21)
// and, for `serve`, spawns the data thread (ADR 27). In the bundle this file stays a separate
// small module for that reason, and the import below loads the chunk holding the rest. Where no
// cache directory is writable (a read-only root), the cache silently does nothing.
import { executionAsyncResource } from "node:async_hooks";
import module from "node:module";
import { spawnDataWorker } from "../data-thread/spawn.ts";
import { servesSidecar } from "./command.ts";

module.enableCompileCache?.();
keepTickRecord();
// The data thread boots on another core while this thread loads the rest (ADR 27).
const argv = process.argv.slice(2);
const dataWorker = servesSidecar(argv) ? spawnDataWorker() : undefined;
const { main } = await import("./run.ts");
process.exitCode = await main(argv, dataWorker === undefined ? {} : { dataWorker });

/**
 * Keeps one of Node's `process.nextTick` records alive for the life of the process (ADR 21).
 * Without one, V8 ended up building every record through its runtime after start-up: 8–10 µs of
 * each `/v1/route` request's CPU in the bundle. Inside a nextTick callback,
 * `executionAsyncResource()` is that tick's record.
 */
function keepTickRecord(): void {
  process.nextTick(() => {
    Object.defineProperty(globalThis, Symbol.for("replica-mirror.tick-record"), {
      value: executionAsyncResource(),
    });
  });
}
