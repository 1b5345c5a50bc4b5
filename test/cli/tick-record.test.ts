// The entry keeps one `process.nextTick` record alive from its first tick (ADR 21), in the
// sources as in the bundle: what keeps V8 building those records on its fast path under load.

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

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-tick-"));
  await run(process.execPath, ["scripts/build.ts", "--outdir", join(dir, "dist")]);
});
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
    expect(JSON.parse(kept!.slice("kept ".length))).toEqual([
      "callback",
      "args",
      "Symbol(async_id_symbol)",
      "Symbol(trigger_async_id_symbol)",
      "Symbol(kAsyncContextFrame)",
    ]);
  });
});
