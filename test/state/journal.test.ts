// The state file's journal (ADR 79): a change appends a record of its own size, the warm start
// replays base and records into the state last written, a torn last record is ignored, and a
// record out of its place stops the replay before it. Time is a fake clock's.

import { readFileSync, statSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AppSecret, CheckedRegistry, KeptRegistry } from "../../src/mirror/inputs.ts";
import { REGISTRY_RULES } from "../../src/registry/rules.ts";
import type { KeptCertificate } from "../../src/snapshot/types.ts";
import { bySecret } from "../../src/state/columns.ts";
import { sealRecord } from "../../src/state/journal.ts";
import { readStateWithJournal } from "../../src/state/read-state.ts";
import { ivOf } from "../../src/state/seal.ts";
import type { State } from "../../src/state/state.ts";
import { StateWriter, type StateWritten } from "../../src/state/writer.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { registryOf } from "../support/world.ts";
import {
  byteString,
  CONFIG,
  keptCertificate,
  newKey,
  sampleState,
  scratchPerTest,
} from "./fixtures.ts";

const key = newKey();
const scratch = scratchPerTest();
const HOUR = 3_600_000;
const T = 1_750_000_000_000;

/** A store as the mirror's: a changed Secret is a new object in the same place. */
class Store {
  readonly #secrets = new Map<string, AppSecret>();
  #writes = 0;
  registry: State["registry"] = { present: true, resourceVersion: "1", value: "{}" };
  checked: CheckedRegistry | undefined;
  kept: KeptRegistry | undefined;
  certificates: KeptCertificate[] | undefined;

  set(i: number, valueBytes = 1024): this {
    const [namespace, name] = [i % 2 === 0 ? "tenant-a" : "tenant-b", `app-${i}`];
    const resourceVersion = String(1_000 + this.#writes * 1_000 + i);
    const data = { token: byteString(valueBytes) };
    this.#secrets.set(`${namespace}/${name}`, { namespace, name, resourceVersion, data });
    return this;
  }

  remove(i: number): this {
    this.#secrets.delete(`${i % 2 === 0 ? "tenant-a" : "tenant-b"}/app-${i}`);
    return this;
  }

  /** The next state to write: the store's objects as they are, in the store's order. */
  state(): State {
    this.#writes += 1;
    const base = sampleState({ savedAt: T + this.#writes, writes: this.#writes });
    const { checked, kept, certificates } = this;
    return {
      ...base,
      registry: this.registry,
      secrets: [...this.#secrets.values()],
      ...(checked === undefined ? {} : { checked }),
      ...(kept === undefined ? {} : { kept }),
      ...(certificates === undefined ? {} : { certificates }),
    };
  }
}

/** A state as a file gives it back: its App Secrets by namespace, then name. */
const inFileOrder = (s: State): State => ({ ...s, secrets: [...s.secrets].sort(bySecret) });

function writer(clock = new FakeClock()) {
  const written: StateWritten[] = [];
  const errors: string[] = [];
  const w = new StateWriter({
    path: scratch.path,
    key,
    clock,
    onError: (e) => errors.push(e.message),
    onWritten: (x) => written.push(x),
  });
  const write = async (state: State) => {
    w.schedule(state);
    await w.flush();
  };
  return { write, written, errors, clock };
}

const read = () =>
  readStateWithJournal({ path: scratch.path, key, maxAgeMs: HOUR, now: T, config: CONFIG });

const journal = (records: number, bytes: number, torn = false) => ({
  records,
  bytes,
  torn,
  stopped: null,
});

const CHECK: CheckedRegistry = {
  under: {
    rules: REGISTRY_RULES,
    defaultNamespace: "mirror",
    allowLocalUpstreams: false,
    maxDecompressedBytes: 4096,
  },
  contentHash: "00112233aabbccdd",
  registry: { apps: [] },
  refused: [],
};

/** The Registry in service beside a refused value (ADR 91). */
const KEPT: KeptRegistry = {
  under: CHECK.under,
  beside: "4",
  registry: registryOf([{ name: "shop", hostnames: ["shop.example.com"] }], "mirror"),
};

describe("the state file's journal", () => {
  it("writes a one-App change as a record of about that App's bytes, after the base", async () => {
    const store = new Store();
    for (let i = 0; i < 400; i++) store.set(i);
    const { write, written, errors } = writer();
    await write(store.state());
    const base = statSync(scratch.path).size;
    const rotated = store.set(7).state();
    await write(rotated);
    const record = written[1]!.bytes;
    const file = readFileSync(scratch.path);
    const value = Buffer.from([...rotated.secrets][7]!.data.token!, "latin1");
    expect({
      leaked: [value, Buffer.from(value.toString("base64")), value.subarray(100, 116)].some((v) =>
        file.includes(v),
      ),
      records: written.map((w) => w.record),
      grew: statSync(scratch.path).size - base,
      small: record > 1024 && record < 1024 + 512,
      baseIsWhole: base > 400 * 1024,
      read: await read(),
      errors,
    }).toEqual({
      records: [0, 1],
      grew: record,
      small: true,
      baseIsWhole: true,
      leaked: false,
      read: {
        ok: true,
        value: {
          state: inFileOrder(rotated),
          base: { iv: ivOf(file), bytes: base },
          journal: journal(1, record),
        },
      },
      errors: [],
    });
  });

  it("replays additions, changes, removals, the Registry, its check, the kept Registry and kept certificates into the state last written", async () => {
    const store = new Store();
    for (let i = 0; i < 200; i++) store.set(i, 256);
    const { write, written } = writer();
    const reads: unknown[] = [];
    const expected: unknown[] = [];
    const steps: ((s: Store) => void)[] = [
      () => {},
      (s) => s.set(3, 32).set(40, 32).remove(0),
      (s) => {
        s.registry = { present: true, resourceVersion: "2", value: byteString(300) };
        s.checked = CHECK;
      },
      (s) => s.remove(40).set(41, 32).set(5, 0),
      (s) => {
        s.registry = { present: true, resourceVersion: "4", value: "{not json" };
        s.checked = undefined;
        s.kept = KEPT;
      },
      (s) => {
        s.kept = { ...KEPT, beside: "5" };
        s.registry = { present: true, resourceVersion: "5", value: "{still not json" };
      },
      (s) => {
        s.registry = { present: false };
        s.kept = undefined;
        s.certificates = [keptCertificate("shop", "01")];
      },
      (s) => {
        s.certificates = [keptCertificate("blog", "02"), keptCertificate("shop", "01")];
      },
      (s) => {
        s.certificates = undefined;
      },
      (s) => {
        s.registry = { present: true, resourceVersion: "3", value: null };
      },
      () => {},
    ];
    for (const step of steps) {
      step(store);
      const state = store.state();
      await write(state);
      const r = await read();
      reads.push(r.ok ? r.value.state : r);
      expected.push(inFileOrder(state));
    }
    expect(written.map((w) => w.record)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(reads).toEqual(expected);
  });

  it("ignores a torn last record: the state before it, at every length it could be cut", async () => {
    const store = new Store();
    for (let i = 0; i < 5; i++) store.set(i, 64);
    const { write, written } = writer();
    const states = [store.state(), store.set(1, 64).state(), store.set(2, 64).state()];
    for (const s of states) await write(s);
    const file = readFileSync(scratch.path);
    const [base, first, last] = written.map((w) => w.bytes) as [number, number, number];
    const cuts: unknown[] = [];
    for (let length = base + first; length < file.length; length++) {
      writeFileSync(scratch.path, file.subarray(0, length));
      cuts.push(await read());
    }
    const torn = (length: number) => length > base + first;
    expect(cuts).toEqual(
      Array.from({ length: last }, (_, i) => ({
        ok: true,
        value: {
          state: inFileOrder(states[1]!),
          base: { iv: ivOf(file), bytes: base },
          journal: journal(1, first, torn(base + first + i)),
        },
      })),
    );
  });

  it("stops at a record dropped from the middle, moved, spliced from another base, altered, or malformed", async () => {
    const store = new Store();
    for (let i = 0; i < 30; i++) store.set(i, 64);
    const { write, written } = writer();
    const states = [
      store.state(),
      store.set(1, 64).state(),
      store.set(2, 64).state(),
      store.set(3, 64).state(),
    ];
    for (const s of states) await write(s);
    const file = readFileSync(scratch.path);
    const ends = written
      .map((w) => w.bytes)
      .map((_, i, all) => all.slice(0, i + 1).reduce((a, b) => a + b));
    const [b, r1, r2, r3] = ends.map((end, i) => file.subarray(i === 0 ? 0 : ends[i - 1], end)) as [
      Buffer,
      Buffer,
      Buffer,
      Buffer,
    ];
    // Another base of the same writer's key, as a restore of another file would put back.
    await writer().write(new Store().set(9).state());
    const other = readFileSync(scratch.path);
    const altered = Buffer.from(r2);
    altered[40]! ^= 1;
    const malformed = sealRecord(Buffer.from([0, 0, 0, 2, 0x7b, 0x7d]), key, ivOf(b), 2);
    const cases: [string, Buffer[]][] = [
      ["dropped", [b, r1, r3]],
      ["moved", [b, r2, r1, r3]],
      ["spliced", [other, r1, r2]],
      ["altered", [b, r1, altered, r3]],
      ["malformed", [b, r1, malformed, r3]],
    ];
    const outcomes: Record<string, unknown> = {};
    for (const [name, parts] of cases) {
      writeFileSync(scratch.path, Buffer.concat(parts));
      const r = await read();
      outcomes[name] = r.ok
        ? {
            savedAt: r.value.state.savedAt,
            records: r.value.journal.records,
            stopped: r.value.journal.stopped?.message,
          }
        : r;
    }
    const forged = `does not authenticate under this key: altered or damaged`;
    const at = (index: number, message: string) =>
      `state file ${scratch.path} record ${index} ${message}`;
    expect(outcomes).toEqual({
      dropped: { savedAt: states[1]!.savedAt, records: 1, stopped: at(2, forged) },
      moved: { savedAt: states[0]!.savedAt, records: 0, stopped: at(1, forged) },
      spliced: { savedAt: T + 1, records: 0, stopped: at(1, forged) },
      altered: { savedAt: states[1]!.savedAt, records: 1, stopped: at(2, forged) },
      malformed: {
        savedAt: states[1]!.savedAt,
        records: 1,
        stopped: at(2, "its skeleton is invalid: invalid_type at savedAt"),
      },
    });
  });
});
