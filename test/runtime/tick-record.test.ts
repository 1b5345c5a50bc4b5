// The entry keeps one `process.nextTick` record alive from its first tick (ADR 21), in the
// sources as in the bundle, and so does the data thread (ADR 27), whose isolate is its own: what
// keeps V8 building those records on its fast path under load.

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

// Loaded with --import before the entry: on exit, prints the own keys of what the entry kept.
const PROBE = `data:text/javascript,${encodeURIComponent(`
process.on("exit", () => {
  const kept = globalThis[Symbol.for("replica-mirror.tick-record")];
  const keys = kept === undefined ? null : Reflect.ownKeys(kept).map(String);
  process.stdout.write("kept " + JSON.stringify(keys) + "\\n");
});`)}`;

// Loaded with --import into the data thread's worker: a moment after it boots, posts the own keys
// of what the worker kept to the main thread.
const WORKER_PROBE = `data:text/javascript,${encodeURIComponent(`
import { parentPort } from "node:worker_threads";
setTimeout(() => {
  const kept = globalThis[Symbol.for("replica-mirror.tick-record")];
  parentPort.postMessage({ kept: kept === undefined ? null : Reflect.ownKeys(kept).map(String) });
}, 200);`)}`;

// Starts the worker as `spawnDataWorker` does (it waits for its settings) and prints the probe's
// answer.
const WORKER_HOST = `
import { Worker } from "node:worker_threads";
const worker = new Worker(process.argv[1], { execArgv: ["--import", process.argv[2]] });
worker.on("message", (m) => {
  if (m.kept === undefined) return;
  process.stdout.write("kept " + JSON.stringify(m.kept) + "\\n");
  void worker.terminate();
});`;

const RECORD_KEYS = [
  "callback",
  "args",
  "Symbol(async_id_symbol)",
  "Symbol(trigger_async_id_symbol)",
  "Symbol(kAsyncContextFrame)",
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-tick-"));
  await run(process.execPath, ["scripts/build.ts", "--outdir", join(dir, "dist")]);
  // A build takes seconds, tens of them on a busy machine.
}, 180_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the entry", () => {
  it.each([
    ["the sources", () => "src/cli/main.ts"],
    ["the bundle", () => join(dir, "dist", "main.mjs")],
  ])("keeps a nextTick record for the life of the process (%s)", async (_, entry) => {
    const { stdout } = await run(process.execPath, ["--import", PROBE, entry(), "--version"]);
    const [version, kept] = stdout.trim().split("\n");
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(JSON.parse(kept!.slice("kept ".length))).toEqual(RECORD_KEYS);
  });
});

describe("the data thread", () => {
  it.each([
    ["the sources", () => "./src/route/worker.ts"],
    ["the bundle", () => join(dir, "dist", "data-thread.cjs")],
  ])("keeps a nextTick record of its own isolate (%s)", async (_, entry) => {
    const { stdout } = await run(process.execPath, [
      "--input-type=module",
      "-e",
      WORKER_HOST,
      entry(),
      WORKER_PROBE,
    ]);
    expect(stdout).toBe(`kept ${JSON.stringify(RECORD_KEYS)}\n`);
  });
});
