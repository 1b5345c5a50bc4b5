// The high-water mark beside the state file: it comes back whole, and neither file stands in for
// the other.

import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { markPathOf, readMarkFile, writeMarkFile } from "../../src/state/mark.ts";
import { readStateFile } from "../../src/state/read-state.ts";
import { writeStateFile } from "../../src/state/write-state.ts";
import { CONFIG, newKey, sampleState, scratchPerTest } from "./fixtures.ts";

const key = newKey();
const scratch = scratchPerTest();
const mark = {
  series: "0123456789abcdef",
  writes: 12,
  heardAt: null,
  savedAt: 1_750_000_000_000,
  registry: "41",
};

describe("the high-water mark", () => {
  it("is kept beside the state file and read back whole", async () => {
    const path = markPathOf(scratch.path);
    expect(path).toBe(`${scratch.path}.newest`);
    expect(await writeMarkFile(path, key, mark)).toEqual({ ok: true, value: undefined });
    expect(await readMarkFile(path, key)).toEqual({ ok: true, value: mark });
    expect(await readMarkFile(path, newKey())).toMatchObject({
      ok: false,
      error: { kind: "foreign-key" },
    });
  });

  it("says a missing mark is missing", async () => {
    const path = markPathOf(scratch.path);
    expect(await readMarkFile(path, key)).toEqual({
      ok: false,
      error: { kind: "missing", message: `high-water mark ${path} does not exist` },
    });
  });

  it("is no state file, and a state file is no mark", async () => {
    const path = markPathOf(scratch.path);
    await writeMarkFile(path, key, mark);
    await writeStateFile(scratch.path, key, sampleState());
    const [state, marked] = [readFileSync(scratch.path), readFileSync(path)];
    writeFileSync(path, state);
    writeFileSync(scratch.path, marked);
    expect(await readMarkFile(path, key)).toEqual({
      ok: false,
      error: {
        kind: "not-a-state-file",
        message: `high-water mark ${path} does not start with a high-water mark's magic bytes`,
      },
    });
    const options = { path: scratch.path, key, maxAgeMs: 1_000, now: mark.savedAt, config: CONFIG };
    expect(await readStateFile(options)).toEqual({
      ok: false,
      error: {
        kind: "not-a-state-file",
        message: `state file ${scratch.path} does not start with the state file's magic bytes`,
      },
    });
  });
});
