#!/usr/bin/env node
// The entry point. For `serve` it spawns the data thread first, so that the thread boots on
// another core while this one loads the rest: in the bundle this file stays a small module of its
// own for that reason, and the import below loads the chunk holding the rest.
import { spawnDataWorker } from "../route/spawn.ts";
import { servesSidecar } from "./command.ts";

const argv = process.argv.slice(2);
const dataWorker = servesSidecar(argv) ? spawnDataWorker() : undefined;
const { main } = await import("./run.ts");
process.exitCode = await main(argv, dataWorker === undefined ? {} : { dataWorker });
