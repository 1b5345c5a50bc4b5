#!/usr/bin/env node
// The entry point. Before the rest is loaded it turns on V8's compile cache (start-up is mostly
// loading code, and a warm cache skips compiling it), keeps one nextTick record alive
// and, for `serve`, spawns the data thread. In the bundle this file stays a separate
// small module for that reason, and the import below loads the chunk holding the rest. Where no
// cache directory is writable (a read-only root), the cache silently does nothing.
import module from "node:module";
import { spawnDataWorker } from "../route/spawn.ts";
import { keepTickRecord } from "../runtime/tick-record.ts";
import { servesSidecar } from "./command.ts";

module.enableCompileCache?.();
keepTickRecord();
// The data thread boots on another core while this thread loads the rest.
const argv = process.argv.slice(2);
const dataWorker = servesSidecar(argv) ? spawnDataWorker() : undefined;
const { main } = await import("./run.ts");
process.exitCode = await main(argv, dataWorker === undefined ? {} : { dataWorker });
