// One write of the state file: sealed bytes only, mode 0600, all or nothing.

import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { removeStaleTemporaries } from "../../src/state/file.ts";
import { readStateFile } from "../../src/state/read-state.ts";
import type { State } from "../../src/state/state.ts";
import { writeStateFile } from "../../src/state/write-state.ts";
import {
  CONFIG,
  type FailAt,
  newKey,
  recordingFileSystem,
  sampleState,
  scratchPerTest,
  secretValues,
} from "./fixtures.ts";

const key = newKey();
const scratch = scratchPerTest();

const read = (s: State) =>
  readStateFile({ path: scratch.path, key, maxAgeMs: 60_000, now: s.savedAt, config: CONFIG });

describe("writeStateFile", () => {
  it("writes a file of mode 0600, whatever the umask", async () => {
    const umask = process.umask(0o277);
    try {
      expect((await writeStateFile(scratch.path, key, sampleState())).ok).toBe(true);
    } finally {
      process.umask(umask);
    }
    expect(statSync(scratch.path).mode & 0o777).toBe(0o600);
    await writeStateFile(scratch.path, key, sampleState());
    expect(statSync(scratch.path).mode & 0o777).toBe(0o600);
  });

  it("resolves with the size of the file it wrote", async () => {
    const w = await writeStateFile(scratch.path, key, sampleState());
    const file = readFileSync(scratch.path);
    expect(w).toEqual({ ok: true, value: { bytes: file.length, iv: file.subarray(18, 30) } });
  });

  it("never writes a Secret value, raw, base64, hex or latin1-as-UTF-8, to any file", async () => {
    const state = sampleState({ secrets: 20, valueBytes: 64 });
    const fs = recordingFileSystem();
    expect((await writeStateFile(scratch.path, key, state, fs)).ok).toBe(true);
    const everything = Buffer.concat([...fs.written, readFileSync(scratch.path)]);
    const values = secretValues(state);
    expect(values).toHaveLength(41);
    for (const value of values) {
      const bytes = Buffer.from(value, "latin1");
      for (const form of [
        bytes,
        Buffer.from(bytes.toString("base64")),
        Buffer.from(bytes.toString("hex")),
        Buffer.from(value, "utf8"),
        // Any 16-byte run of the value, in case it were stored cut up.
        bytes.subarray(24, 40),
      ])
        expect(everything.includes(form)).toBe(false);
    }
    // Names and resourceVersions are sealed too: nothing of the document is readable.
    expect(everything.includes(Buffer.from("tenant-a"))).toBe(false);
    expect(everything.includes(Buffer.from("registry.json"))).toBe(false);
  });

  it.each<FailAt>(["create", "write", "sync", "rename"])(
    "leaves the previous file intact and no temporary file when %s fails",
    async (failAt) => {
      const before = sampleState({ savedAt: 1_000 });
      expect((await writeStateFile(scratch.path, key, before)).ok).toBe(true);
      const previous = readFileSync(scratch.path);
      const w = await writeStateFile(
        scratch.path,
        key,
        sampleState({ savedAt: 2_000 }),
        recordingFileSystem(failAt),
      );
      expect(w).toEqual({
        ok: false,
        error: { message: `writing ${scratch.path}: no space left on the device, ENOSPC in write` },
      });
      expect(readFileSync(scratch.path).equals(previous)).toBe(true);
      expect(readdirSync(scratch.dir)).toEqual(["state"]);
      expect(await read(before)).toEqual({ ok: true, value: before });
    },
  );

  it("reports a failed directory sync after the new file is in place", async () => {
    const next = sampleState({ savedAt: 2_000 });
    const w = await writeStateFile(scratch.path, key, next, recordingFileSystem("syncDirectory"));
    expect(w).toEqual({
      ok: false,
      error: {
        message: `syncing the directory of ${scratch.path}: no space left on the device, ENOSPC in write`,
      },
    });
    expect(readdirSync(scratch.dir)).toEqual(["state"]);
    expect(await read(next)).toEqual({ ok: true, value: next });
  });

  it("leaves no file at all when the first write fails", async () => {
    const w = await writeStateFile(scratch.path, key, sampleState(), recordingFileSystem("write"));
    expect(w.ok).toBe(false);
    expect(readdirSync(scratch.dir)).toEqual([]);
  });

  it("reports a value that is not a byte string, and writes nothing", async () => {
    const state = sampleState();
    const bad: State = {
      ...state,
      secrets: [{ ...[...state.secrets][0]!, data: { token: "caf\u00e9 \u2603" } }],
    };
    expect(await writeStateFile(scratch.path, key, bad)).toEqual({
      ok: false,
      error: {
        message: `encoding the state for ${scratch.path}: a Secret value is not a byte string`,
      },
    });
    expect(readdirSync(scratch.dir)).toEqual([]);
  });

  it("encodes, seals and writes a large state a slice at a time, giving the event loop turns (ADR 78)", async () => {
    // 20k Secrets of two 120 B values: 40k values, at most 1,024 a slice; columns over ten runs.
    const state = sampleState({ secrets: 20_000, valueBytes: 120 });
    const fs = recordingFileSystem();
    let turns = 0;
    let writing = true;
    let turnsBeforeCreate: number | null = null;
    const tick = (): void => {
      if (!writing) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    const create = fs.create.bind(fs);
    fs.create = async (path, mode) => {
      turnsBeforeCreate = turns;
      return create(path, mode);
    };
    const w = await writeStateFile(scratch.path, key, state, fs);
    writing = false;
    const size = statSync(scratch.path).size;
    const slices = fs.written.slice(1, -1).map((b) => b.length);
    expect({
      written: w,
      header: fs.written[0]?.length,
      tag: fs.written.at(-1)?.length,
      sliced: slices.reduce((a, b) => a + b, 0),
      slices: slices.length >= 20 && slices.every((n) => n <= 1 << 18),
      turnsWhileEncoding: (turnsBeforeCreate ?? 0) >= 5,
      read: await read(state),
    }).toEqual({
      written: { ok: true, value: { bytes: size, iv: fs.written[0]?.subarray(18, 30) } },
      header: 34,
      tag: 16,
      sliced: size - 34 - 16,
      slices: true,
      turnsWhileEncoding: true,
      read: { ok: true, value: state },
    });
  });

  it("reports a directory that does not exist", async () => {
    const missing = join(scratch.dir, "gone", "state");
    const w = await writeStateFile(missing, key, sampleState());
    expect(w.ok).toBe(false);
    if (!w.ok) expect(w.error.message).toMatch(/^writing .*gone\/state: does not exist, ENOENT/);
  });
});

describe("removeStaleTemporaries", () => {
  it("removes the temporary files of this state file a killed writer left, nothing else", async () => {
    const names = [
      ".state.tmp-0123456789abcdef",
      ".state.tmp-fedcba9876543210",
      ".other.tmp-0123456789abcdef",
      ".state.tmp-not-hex",
      "state",
    ];
    for (const name of names) writeFileSync(join(scratch.dir, name), "x");
    await removeStaleTemporaries(scratch.path);
    expect(readdirSync(scratch.dir).sort()).toEqual([
      ".other.tmp-0123456789abcdef",
      ".state.tmp-not-hex",
      "state",
    ]);
  });
});
