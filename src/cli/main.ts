#!/usr/bin/env node
// The entry point. It turns on V8's compile cache before anything else is loaded: start-up is
// mostly module loading (client-node alone is hundreds of files), and a warm cache cuts it by a
// third. Where no cache directory is writable (a read-only root), this silently does nothing.
import module from "node:module";

module.enableCompileCache?.();
const { main } = await import("./run.ts");
process.exitCode = await main(process.argv.slice(2));
