// The coalescing writer under a fake clock: at most one write per interval, the newest state, and
// flush() for SIGTERM.

import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { FileSystem } from "../../src/state/file.ts";
import { markPathOf, readMarkFile } from "../../src/state/mark.ts";
import { openStateFile, readStateFile } from "../../src/state/read-state.ts";
import type { State } from "../../src/state/state.ts";
import { StateWriter, type StateWriterOptions } from "../../src/state/writer.ts";
import { FakeClock, settle } from "../support/fake-clock.ts";
import { CONFIG, memoryFileSystem, newKey, sampleState, scratchPerTest } from "./fixtures.ts";

const key = newKey();
const PATH = "/state/state";
const MARK = markPathOf(PATH);
const states = new Map<number, State>();
/** The state saved at `savedAt`: the same object each time. */
const at = (savedAt: number): State => {
  const state = states.get(savedAt) ?? sampleState({ savedAt });
  states.set(savedAt, state);
  return state;
};

/** The state the file holds, base and journal (a copy: opening decrypts in place). */
const stateIn = (file: Buffer | undefined) => {
  const opened = openStateFile(Buffer.from(file ?? []), key);
  return opened.ok ? { ok: true, value: opened.value.state } : opened;
};

/** A writer on an in-memory file system, recording when each write landed and what it held. */
function harness(options: Partial<StateWriterOptions> = {}) {
  const clock = new FakeClock();
  const fs = memoryFileSystem();
  const errors: string[] = [];
  const landed: { at: number; savedAt: number }[] = [];
  const land = () => {
    const state = stateIn(fs.files.get(PATH));
    landed.push({ at: clock.now(), savedAt: state.ok ? state.value.savedAt : -1 });
  };
  const recording: FileSystem = {
    ...fs,
    async rename(from, to) {
      await fs.rename(from, to);
      if (to === PATH) land();
    },
    async openAppend(path) {
      const file = await fs.openAppend(path);
      return { ...file, close: async () => land() };
    },
  };
  const writer = new StateWriter({
    path: PATH,
    key,
    clock,
    onError: (e) => errors.push(e.message),
    fileSystem: recording,
    ...options,
  });
  return { clock, fs, writer, errors, landed };
}

describe("StateWriter", () => {
  it("writes the first state at once", async () => {
    const { writer, landed } = harness();
    writer.schedule(at(1));
    await settle();
    expect(landed).toEqual([{ at: 0, savedAt: 1 }]);
  });

  it("with notBefore, starts no write until it settles, but one flush asks for", async () => {
    const released = Promise.withResolvers<void>();
    const { writer, landed, clock } = harness({ notBefore: released.promise });
    writer.schedule(at(1));
    await clock.advance(60_000);
    const held = [...landed];
    released.resolve();
    await settle();
    writer.schedule(at(2));
    await clock.advance(5_000);
    const other = harness({ notBefore: new Promise(() => {}) });
    other.writer.schedule(at(3));
    await other.writer.flush();
    expect({ held, landed, flushed: other.landed }).toEqual({
      held: [],
      landed: [
        { at: 60_000, savedAt: 1 },
        { at: 65_000, savedAt: 2 },
      ],
      flushed: [{ at: 0, savedAt: 3 }],
    });
  });

  it("writes at most once per interval, each time the newest state scheduled", async () => {
    const { clock, writer, landed } = harness({ intervalMs: 5_000 });
    // A Snapshot every 100 ms for 12 s.
    for (let t = 0; t <= 12_000; t += 100) {
      writer.schedule(at(t));
      await clock.advance(100);
    }
    await clock.advance(10_000);
    expect(landed).toEqual([
      { at: 0, savedAt: 0 },
      { at: 5_000, savedAt: 4_900 },
      { at: 10_000, savedAt: 9_900 },
      { at: 15_000, savedAt: 12_000 },
    ]);
    expect(clock.pending()).toEqual([]);
  });

  it("writes nothing more when nothing new was scheduled", async () => {
    const { clock, writer, landed } = harness();
    writer.schedule(at(1));
    await clock.advance(60_000);
    expect(landed).toHaveLength(1);
    expect(clock.pending()).toEqual([]);
  });

  it("writes a state scheduled after a quiet spell at once", async () => {
    const { clock, writer, landed, errors } = harness({ intervalMs: 5_000 });
    writer.schedule(at(1));
    await clock.advance(7_000);
    writer.schedule(at(2));
    await settle();
    expect(errors).toEqual([]);
    expect(landed).toEqual([
      { at: 0, savedAt: 1 },
      { at: 7_000, savedAt: 2 },
    ]);
  });

  it("flush writes the pending state at once, without waiting for the interval", async () => {
    const { clock, writer, landed } = harness({ intervalMs: 5_000 });
    writer.schedule(at(1));
    await clock.advance(1_000);
    writer.schedule(at(2));
    writer.schedule(at(3));
    await writer.flush();
    expect(landed).toEqual([
      { at: 0, savedAt: 1 },
      { at: 1_000, savedAt: 3 },
    ]);
    expect(clock.pending()).toEqual([]);
    await writer.flush();
    expect(landed).toHaveLength(2);
  });

  it("never runs two writes at once: a state scheduled during a slow write follows it", async () => {
    const clock = new FakeClock();
    const fs = memoryFileSystem();
    const releases: (() => void)[] = [];
    let writing = 0;
    let most = 0;
    const landed: number[] = [];
    const slowly = async <T>(open: () => Promise<T>): Promise<T> => {
      writing += 1;
      most = Math.max(most, writing);
      await new Promise<void>((resolve) => releases.push(resolve));
      return open();
    };
    const landing = () => {
      writing -= 1;
      landed.push(clock.now());
    };
    const slow: FileSystem = {
      ...fs,
      async create(path, mode) {
        if (path.includes(".newest.tmp-")) return fs.create(path, mode);
        return slowly(() => fs.create(path, mode));
      },
      async rename(from, to) {
        await fs.rename(from, to);
        if (to === PATH) landing();
      },
      async openAppend(path) {
        const file = await slowly(() => fs.openAppend(path));
        return { ...file, close: async () => landing() };
      },
    };
    const writer = new StateWriter({ path: PATH, key, clock, onError: () => {}, fileSystem: slow });
    writer.schedule(at(1));
    await clock.advance(8_000);
    writer.schedule(at(2));
    await clock.advance(8_000);
    expect([releases.length, landed]).toEqual([1, []]);
    releases.shift()!();
    await settle();
    expect([releases.length, landed]).toEqual([1, [16_000]]);
    releases.shift()!();
    await settle();
    expect(landed).toEqual([16_000, 16_000]);
    expect(most).toBe(1);
    expect(stateIn(fs.files.get(PATH))).toEqual({ ok: true, value: at(2) });
  });

  it("flush waits for the write in flight, then writes the newest state", async () => {
    const { clock, writer, fs, landed } = harness({ intervalMs: 5_000 });
    writer.schedule(at(1));
    writer.schedule(at(2));
    const flushed = writer.flush();
    writer.schedule(at(3));
    await flushed;
    expect(landed.map((l) => l.savedAt)).toEqual([1, 3]);
    expect([...fs.files.keys()]).toEqual([PATH, MARK]);
    expect(clock.pending()).toEqual([]);
  });

  it("reports a failed write and writes the newest state next time", async () => {
    const { clock, fs, writer, errors, landed } = harness({ intervalMs: 5_000 });
    fs.failNext = true;
    writer.schedule(at(1));
    await settle();
    expect(errors).toEqual([`writing ${PATH}: EIO in open`]);
    writer.schedule(at(2));
    await clock.advance(5_000);
    expect(landed).toEqual([{ at: 5_000, savedAt: 2 }]);
  });

  it("keeps going when its callbacks throw", async () => {
    const { clock, fs, writer } = harness({
      intervalMs: 5_000,
      onError: () => {
        throw new Error("a logger that fails");
      },
      onWritten: () => {
        throw new Error("a metric that fails");
      },
    });
    fs.failNext = true;
    writer.schedule(at(1));
    await clock.advance(5_000);
    writer.schedule(at(2));
    await clock.advance(5_000);
    writer.schedule(at(3));
    await writer.flush();
    expect([...fs.files.keys()]).toEqual([PATH, MARK]);
  });

  it("reports each write's size and duration", async () => {
    const written: { bytes: number; durationMs: number }[] = [];
    const { fs, writer } = harness({ onWritten: (w) => written.push(w) });
    writer.schedule(at(1));
    await writer.flush();
    expect(written).toEqual([{ bytes: fs.files.get(PATH)!.length, durationMs: 0, record: 0 }]);
  });

  it("close drops the pending state, cancels its timer and ignores later states", async () => {
    const { clock, writer, landed } = harness({ intervalMs: 5_000 });
    writer.schedule(at(1));
    writer.schedule(at(2));
    await settle();
    expect(clock.pending()).toEqual([5_000]);
    await writer.close();
    expect(clock.pending()).toEqual([]);
    writer.schedule(at(3));
    await writer.flush();
    await clock.advance(60_000);
    expect(landed).toEqual([{ at: 0, savedAt: 1 }]);
  });

  it("follows each state on disk with its mark, never the mark first", async () => {
    const { fs, writer } = harness();
    const order: string[] = [];
    const rename = fs.rename;
    fs.rename = async (from, to) => {
      await rename(from, to);
      order.push(to);
    };
    writer.schedule(sampleState({ savedAt: 10, writes: 7 }));
    await writer.flush();
    expect(order).toEqual([PATH, MARK]);
  });

  it("reports a mark that could not be written, the state being on disk", async () => {
    const fs = memoryFileSystem();
    const errors: string[] = [];
    const failingMark: FileSystem = {
      ...fs,
      create(path, mode) {
        fs.failNext = path.includes(".newest.tmp-");
        return fs.create(path, mode);
      },
    };
    const writer = new StateWriter({
      path: PATH,
      key,
      clock: new FakeClock(),
      onError: (e) => errors.push(e.message),
      fileSystem: failingMark,
    });
    writer.schedule(at(1));
    await writer.flush();
    expect(errors).toEqual([`writing ${MARK}: EIO in open`]);
    expect([...fs.files.keys()]).toEqual([PATH]);
  });
});

describe("StateWriter on disk", () => {
  const scratch = scratchPerTest();

  it("flush resolves with the newest state on disk, readable by the warm start", async () => {
    const { path } = scratch;
    const writer = new StateWriter({ path, key, clock: new FakeClock(), onError: () => {} });
    writer.schedule(at(1));
    writer.schedule(at(2));
    writer.schedule(at(3));
    await writer.flush();
    const read = await readStateFile({ path, key, maxAgeMs: 1_000, now: 3, config: CONFIG });
    expect(read).toEqual({ ok: true, value: at(3) });
    expect(readdirSync(scratch.dir).sort()).toEqual(["state", "state.newest"]);
  });

  it("leaves beside the state the mark of its generation, readable at the next start", async () => {
    const { path } = scratch;
    const writer = new StateWriter({ path, key, clock: new FakeClock(), onError: () => {} });
    const state = sampleState({ savedAt: 20, writes: 3 });
    writer.schedule(state);
    await writer.flush();
    expect(await readMarkFile(markPathOf(path), key)).toEqual({
      ok: true,
      value: {
        series: state.generation.series,
        writes: 3,
        heardAt: state.generation.heardAt,
        savedAt: 20,
        registry: "41",
      },
    });
  });

  it("a writer killed mid-write leaves the previous file; the next writer removes its temporary file", async () => {
    const { path } = scratch;
    const src = (file: string) =>
      JSON.stringify(new URL(`../../src/state/${file}`, import.meta.url).href);
    // A child that writes one state, then stalls halfway through writing the next; killed then.
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { nodeFileSystem } from ${src("file.ts")};
         import { StateKey } from ${src("key.ts")};
         import { writeStateFile } from ${src("write-state.ts")};
         const [path, keyHex, stateJson] = process.argv.slice(1);
         const key = new StateKey(Buffer.from(keyHex, "hex"));
         const state = JSON.parse(stateJson);
         await writeStateFile(path, key, state);
         const stalling = { ...nodeFileSystem, async create(p, mode) {
           const file = await nodeFileSystem.create(p, mode);
           return { ...file, async writeAll(data) {
             await file.writeAll(data.subarray(0, data.length >> 1));
             process.stdout.write("stalled\\n");
             await new Promise(() => {});
           } };
         } };
         await writeStateFile(path, key, { ...state, savedAt: 2 }, stalling);`,
        path,
        key.bytes().toString("hex"),
        JSON.stringify(at(1)),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const stalled = await Promise.race([
      new Promise<boolean>((resolve) => child.stdout.once("data", () => resolve(true))),
      exited.then(() => false),
    ]);
    expect(stalled).toBe(true);
    child.kill("SIGKILL");
    await exited;
    const names = readdirSync(scratch.dir).sort();
    expect(names).toHaveLength(2);
    expect(names[0]).toMatch(/^\.state\.tmp-[0-9a-f]{16}$/);
    expect(names[1]).toBe("state");
    const read = (now: number) =>
      readStateFile({ path, key, maxAgeMs: 1_000, now, config: CONFIG });
    expect(await read(1)).toEqual({ ok: true, value: at(1) });
    const next = new StateWriter({ path, key, clock: new FakeClock(), onError: () => {} });
    next.schedule(at(3));
    await next.flush();
    expect(readdirSync(scratch.dir).sort()).toEqual(["state", "state.newest"]);
    expect(await read(3)).toEqual({ ok: true, value: at(3) });
  });
});
