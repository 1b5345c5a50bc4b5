// When the journal is folded into a new base (ADR 79), that a write cut short anywhere leaves a
// state that reads, and that any run of changes, compactions and restarts reads back the last
// state written. Time is a fake clock's.

import { readFileSync, statSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AppSecret } from "../../src/mirror/inputs.ts";
import { bySecret } from "../../src/state/columns.ts";
import type { FileSystem } from "../../src/state/file.ts";
import {
  type OpenedStateFile,
  openStateFile,
  readStateWithJournal,
} from "../../src/state/read-state.ts";
import { ivOf } from "../../src/state/seal.ts";
import type { State } from "../../src/state/state.ts";
import { COMPACTION, StateWriter, type StateWritten } from "../../src/state/writer.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
  byteString,
  CONFIG,
  type FailAt,
  memoryFileSystem,
  newKey,
  recordingFileSystem,
  sampleState,
  scratchPerTest,
} from "./fixtures.ts";

const key = newKey();
const T = 1_750_000_000_000;
const HOUR = 3_600_000;

/** A state of `secrets`, the `writes`th write. */
const stateOf = (secrets: readonly AppSecret[], writes: number): State => ({
  ...sampleState({ savedAt: T + writes, writes }),
  secrets,
});

const secret = (i: number, valueBytes: number, version: number): AppSecret => ({
  namespace: `ns-${i % 3}`,
  name: `app-${i}`,
  resourceVersion: String(version),
  data: { token: byteString(valueBytes) },
});

const inFileOrder = (s: State): State => ({ ...s, secrets: [...s.secrets].sort(bySecret) });

function writerOn(
  path: string,
  clock: FakeClock,
  fileSystem?: FileSystem,
  resume?: OpenedStateFile,
) {
  const written: StateWritten[] = [];
  const errors: string[] = [];
  const writer = new StateWriter({
    path,
    key,
    clock,
    onError: (e) => errors.push(e.message),
    onWritten: (w) => written.push(w),
    ...(fileSystem === undefined ? {} : { fileSystem }),
    ...(resume === undefined ? {} : { resume }),
  });
  const write = async (state: State) => {
    writer.schedule(state);
    await writer.flush();
  };
  return { write, written, errors };
}

describe("compaction", () => {
  const scratch = scratchPerTest();

  it("folds the journal into a new base at half the base's bytes after a minute, at once before twice the base", async () => {
    const clock = new FakeClock();
    const { write, written } = writerOn(scratch.path, clock);
    const secrets = Array.from({ length: 100 }, (_, i) => secret(i, 1024, 1));
    let writes = 0;
    let last: State | null = null;
    const sizes: number[] = [];
    /** Writes with `changed` Secrets rotated; the file's size after. */
    const rotate = async (changed: number) => {
      for (let i = 0; i < changed; i++) secrets[i] = secret(i, 1024, writes + 2);
      last = stateOf([...secrets], ++writes);
      await write(last);
      sizes.push(statSync(scratch.path).size);
    };
    await rotate(0);
    const base = written[0]!.bytes;
    // Ten Secrets a record: about a tenth of the base each.
    while (written.reduce((a, w) => a + (w.record > 0 ? w.bytes : 0), 0) < base * COMPACTION.ratio)
      await rotate(10);
    const halfway = written.length;
    await rotate(10);
    await clock.advance(COMPACTION.minIntervalMs);
    await rotate(10);
    const compacted = written.length;
    // Past the base's size: a base at once, whatever the time.
    for (let i = 0; i < 12; i++) await rotate(10);
    const records = written.map((w) => w.record);
    /** The size of the base the file had after write `i`. */
    const baseAt = (i: number) => written[records.lastIndexOf(0, i)]!.bytes;
    const second = records.indexOf(0, compacted);
    const read = await readStateWithJournal({
      path: scratch.path,
      key,
      maxAgeMs: HOUR,
      now: T,
      config: CONFIG,
    });
    expect({
      beforeTheMinute: records.slice(0, halfway + 1),
      afterIt: records[compacted - 1],
      thenAtOnce: second > compacted,
      underTwiceTheBase: sizes.every((size, i) => size < 2 * baseAt(i)),
      read: read.ok && read.value.state,
    }).toEqual({
      beforeTheMinute: Array.from({ length: halfway + 1 }, (_, i) => i),
      afterIt: 0,
      thenAtOnce: true,
      underTwiceTheBase: true,
      read: last && inFileOrder(last),
    });
  });

  it("writes a change as large as the base as a new base", async () => {
    const { write, written } = writerOn(scratch.path, new FakeClock());
    const secrets = Array.from({ length: 20 }, (_, i) => secret(i, 512, 1));
    await write(stateOf(secrets, 1));
    await write(stateOf([secret(0, 512, 2), ...secrets.slice(1)], 2));
    const all = secrets.map((_, i) => secret(i, 512, 3));
    await write(stateOf(all, 3));
    expect(written.map((w) => w.record)).toEqual([0, 1, 0]);
  });

  it.each<FailAt>(["write", "sync", "rename"])(
    "a compaction failing at %s leaves the base and journal before it, and the next write is a base",
    async (failAt) => {
      const clock = new FakeClock();
      const healthy = writerOn(scratch.path, clock);
      const secrets = Array.from({ length: 20 }, (_, i) => secret(i, 256, 1));
      await healthy.write(stateOf(secrets, 1));
      const appended = stateOf([secret(0, 256, 2), ...secrets.slice(1)], 2);
      await healthy.write(appended);
      // A new process's first write is a base: here, on a file system that fails.
      const failing = writerOn(scratch.path, clock, recordingFileSystem(failAt));
      await failing.write(stateOf(secrets, 3));
      const after = openStateFile(readFileSync(scratch.path), key);
      const next = writerOn(scratch.path, clock);
      const last = stateOf([secret(0, 256, 4), ...secrets.slice(1)], 4);
      await next.write(last);
      const file = readFileSync(scratch.path);
      const final = openStateFile(Buffer.from(file), key);
      expect({
        failed: failing.errors.length,
        after: after.ok && after.value.state,
        next: next.written.map((w) => w.record),
        final: final.ok && final.value,
      }).toEqual({
        failed: 1,
        after: inFileOrder(appended),
        next: [0],
        final: {
          state: inFileOrder(last),
          base: { iv: ivOf(file), bytes: file.length },
          journal: { records: 0, bytes: 0, torn: false, stopped: null },
        },
      });
    },
  );

  it("an append cut short leaves a torn record, the state before it reads, and the next write is a base", async () => {
    const clock = new FakeClock();
    const fs = recordingFileSystem();
    const { write, written } = writerOn(scratch.path, clock, fs);
    const secrets = Array.from({ length: 20 }, (_, i) => secret(i, 256, 1));
    const first = stateOf(secrets, 1);
    await write(first);
    const failing = recordingFileSystem("write");
    fs.openAppend = failing.openAppend;
    fs.create = failing.create;
    await write(stateOf([secret(0, 256, 2), ...secrets.slice(1)], 2));
    const torn = openStateFile(readFileSync(scratch.path), key);
    fs.openAppend = recordingFileSystem().openAppend;
    fs.create = recordingFileSystem().create;
    const last = stateOf([secret(0, 256, 3), ...secrets.slice(1)], 3);
    await write(last);
    const file = readFileSync(scratch.path);
    expect({
      torn: torn.ok && { state: torn.value.state, torn: torn.value.journal.torn },
      records: written.map((w) => w.record),
      final: openStateFile(Buffer.from(file), key),
    }).toEqual({
      torn: { state: inFileOrder(first), torn: true },
      records: [0, 0],
      final: {
        ok: true,
        value: {
          state: inFileOrder(last),
          base: { iv: ivOf(file), bytes: file.length },
          journal: { records: 0, bytes: 0, torn: false, stopped: null },
        },
      },
    });
  });
});

type Step =
  | { readonly kind: "set"; readonly i: number; readonly bytes: number }
  | { readonly kind: "remove"; readonly i: number }
  | { readonly kind: "registry"; readonly present: boolean }
  | { readonly kind: "write" }
  | { readonly kind: "advance"; readonly ms: number }
  /** A new writer; `warm`: resuming the file as a warm start read it. */
  | { readonly kind: "restart"; readonly warm: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), i: fc.nat(40), bytes: fc.nat(200) }),
  fc.record({ kind: fc.constant("remove" as const), i: fc.nat(40) }),
  fc.record({ kind: fc.constant("registry" as const), present: fc.boolean() }),
  fc.constant({ kind: "write" as const }),
  fc.constant({ kind: "write" as const }),
  fc.record({ kind: fc.constant("advance" as const), ms: fc.nat(90_000) }),
  fc.record({ kind: fc.constant("restart" as const), warm: fc.boolean() }),
);

describe("the journal, property", () => {
  it("reads back the last state written after any run of changes, compactions and restarts, warm or not", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const path = "/state/state";
        const clock = new FakeClock();
        const fs = memoryFileSystem();
        let writer = writerOn(path, clock, fs);
        // A base of 30 Secrets of 300 B: a record of a few changes is a fraction of it.
        const store = new Map<string, AppSecret>();
        for (let i = 0; i < 30; i++) store.set(`${i}`, secret(i, 300, 0));
        let registry: State["registry"] = { present: false };
        let writes = 0;
        let last: State | null = null;
        for (const s of steps) {
          if (s.kind === "set") store.set(`${s.i}`, secret(s.i, s.bytes, writes + 1));
          else if (s.kind === "remove") store.delete(`${s.i}`);
          else if (s.kind === "registry")
            registry = s.present
              ? { present: true, resourceVersion: String(writes + 1), value: byteString(40) }
              : { present: false };
          else if (s.kind === "advance") await clock.advance(s.ms);
          else if (s.kind === "restart") {
            const file = fs.files.get(path);
            const opened =
              s.warm && file !== undefined ? openStateFile(Buffer.from(file), key) : null;
            writer = writerOn(path, clock, fs, opened?.ok ? opened.value : undefined);
          } else {
            last = { ...stateOf([...store.values()], ++writes), registry };
            await writer.write(last);
            expect(writer.errors).toEqual([]);
            const opened = openStateFile(Buffer.from(fs.files.get(path)!), key);
            expect(opened.ok && opened.value.state).toEqual(inFileOrder(last));
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});
