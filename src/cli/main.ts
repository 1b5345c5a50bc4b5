#!/usr/bin/env node
// The entry point. It turns on V8's compile cache before anything else is loaded: start-up is
// mostly loading code, and a warm cache skips compiling it. In the bundle this file stays a
// separate small module for that reason, and the import below loads the one chunk holding the
// rest. Where no cache directory is writable (a read-only root), this silently does nothing.
import module from "node:module";

module.enableCompileCache?.();
const { main } = await import("./run.ts");
process.exitCode = await main(process.argv.slice(2));
