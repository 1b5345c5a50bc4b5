// The warm start's reader: a state comes back whole, and every way a file can be unusable gives
// its own error value, never a throw.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UNKEPT_VALUE } from "../../src/snapshot/types.ts";
import { FUTURE_SKEW_MS } from "../../src/state/check.ts";
import { encodeState } from "../../src/state/document.ts";
import { STATE_ERROR_KINDS, type StateErrorKind } from "../../src/state/errors.ts";
import { StateKey } from "../../src/state/key.ts";
import {
  type ReadStateOptions,
  readStateFile,
  readStateWithJournal,
} from "../../src/state/read-state.ts";
import { FORMAT_VERSION, HEADER_BYTES, ivOf, MAGIC, seal } from "../../src/state/seal.ts";
import { type State, stateConfig } from "../../src/state/state.ts";
import { writeStateFile } from "../../src/state/write-state.ts";
import {
  CONFIG,
  FORMAT_1_FILE,
  FORMAT_1_KEY,
  FORMAT_2_FILE,
  newKey,
  sampleState,
  scratchPerTest,
} from "./fixtures.ts";

const HOUR = 3_600_000;
const key = newKey();
const state = sampleState();

const scratch = scratchPerTest();

const options = (overrides: Partial<ReadStateOptions> = {}): ReadStateOptions => ({
  path: scratch.path,
  key,
  maxAgeMs: HOUR,
  now: state.savedAt + 60_000,
  config: CONFIG,
  ...overrides,
});

async function written(s: State = state): Promise<Buffer> {
  const w = await writeStateFile(scratch.path, key, s);
  if (!w.ok) throw new Error(w.error.message);
  return readFileSync(scratch.path);
}

/** The document of `s` with the App Secret columns of its skeleton changed by `patch`. */
function patched(s: State, patch: (columns: Record<string, unknown>) => void): Buffer {
  const doc = encodeState(s);
  const end = 4 + doc.readUInt32BE(0);
  const skeleton = JSON.parse(doc.toString("utf8", 4, end)) as { secrets: Record<string, unknown> };
  patch(skeleton.secrets);
  const json = Buffer.from(JSON.stringify(skeleton), "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length);
  return Buffer.concat([length, json, doc.subarray(end)]);
}

async function kindOf(overrides: Partial<ReadStateOptions> = {}): Promise<StateErrorKind | "ok"> {
  const r = await readStateFile(options(overrides));
  return r.ok ? "ok" : r.error.kind;
}

describe("readStateFile", () => {
  it("returns the state it was written with, whole", async () => {
    await written();
    expect(await readStateFile(options())).toEqual({ ok: true, value: state });
  });

  it("round-trips every byte value, a Registry without its key, an absent Registry and __proto__ keys", async () => {
    const every = Array.from({ length: 256 }, (_, b) => String.fromCharCode(b)).join("");
    const odd: State = {
      ...state,
      config: stateConfig({
        registryNamespace: "mirror",
        registryName: "registry",
        registryKey: "registry.json",
        secretNamespaces: [],
        secretSelector: undefined,
      }),
      registry: { present: true, resourceVersion: "9", value: null },
      secrets: [
        { namespace: "tenant-a", name: "no-keys", resourceVersion: "8", data: {} },
        {
          namespace: "tenant-a",
          name: "odd",
          resourceVersion: "7",
          data: Object.fromEntries([
            ["__proto__", every],
            ["empty", ""],
          ]),
        },
      ],
      watches: { registry: "10", secrets: [{ namespace: null, resourceVersion: "11" }] },
    };
    await written(odd);
    const back = await readStateFile(options({ config: odd.config }));
    expect(back).toEqual({ ok: true, value: odd });
    expect(back.ok && Object.keys([...back.value.secrets][1]!.data)).toEqual([
      "__proto__",
      "empty",
    ]);
    const absent: State = { ...state, registry: { present: false } };
    await written(absent);
    expect(await readStateFile(options())).toEqual({ ok: true, value: absent });
  });

  it("reads back a state of many cipher slices whole, and refuses it altered in its last one", async () => {
    const big = sampleState({ secrets: 5, valueBytes: 1 << 20 });
    const file = await written(big);
    expect(file.length).toBeGreaterThan(8 << 20);
    expect(await readStateFile(options())).toEqual({ ok: true, value: big });
    file[file.length - 100]! ^= 1;
    writeFileSync(scratch.path, file);
    expect(await kindOf()).toBe("corrupt");
  });

  it("says the file is missing", async () => {
    expect(await readStateFile(options())).toEqual({
      ok: false,
      error: { kind: "missing", message: `state file ${scratch.path} does not exist` },
    });
  });

  it("says a directory in the file's place is unreadable", async () => {
    mkdirSync(scratch.path);
    expect(await readStateFile(options())).toEqual({
      ok: false,
      error: { kind: "unreadable", message: `state file ${scratch.path} is not a regular file` },
    });
  });

  it("refuses a file larger than the cap without reading it", async () => {
    const size = (await written()).length;
    expect(await readStateFile(options({ maxBytes: size - 1 }))).toEqual({
      ok: false,
      error: {
        kind: "too-large",
        message: `state file ${scratch.path} holds ${size} bytes, more than the ${size - 1} allowed`,
      },
    });
    expect(await kindOf({ maxBytes: size })).toBe("ok");
  });

  it("says a truncated file is truncated", async () => {
    const file = await written();
    writeFileSync(scratch.path, file.subarray(0, file.length - 1));
    expect(await readStateFile(options())).toEqual({
      ok: false,
      error: {
        kind: "truncated",
        message: `state file ${scratch.path} holds ${file.length - 1} bytes, its header announces ${file.length}`,
      },
    });
    writeFileSync(scratch.path, file.subarray(0, 20));
    expect(await kindOf()).toBe("truncated");
    writeFileSync(scratch.path, "");
    expect(await kindOf()).toBe("truncated");
  });

  it("says a file that is not a state file is not one", async () => {
    writeFileSync(scratch.path, JSON.stringify({ secrets: [] }));
    expect(await readStateFile(options())).toEqual({
      ok: false,
      error: {
        kind: "not-a-state-file",
        message: `state file ${scratch.path} does not start with the state file's magic bytes`,
      },
    });
  });

  it("says a file of a newer format is from the future, and one of an older format is old", async () => {
    const file = await written();
    file.writeUInt16BE(FORMAT_VERSION + 1, MAGIC.length);
    writeFileSync(scratch.path, file);
    expect(await readStateFile(options())).toEqual({
      ok: false,
      error: {
        kind: "future-version",
        message: `state file ${scratch.path} format version ${FORMAT_VERSION + 1}, newer than ${FORMAT_VERSION}`,
      },
    });
    file.writeUInt16BE(FORMAT_VERSION - 1, MAGIC.length);
    writeFileSync(scratch.path, file);
    expect(await kindOf()).toBe("old-version");
  });

  it("tells a file sealed under another key from a corrupt one", async () => {
    await written();
    const other = newKey();
    expect(await readStateFile(options({ key: other }))).toEqual({
      ok: false,
      error: {
        kind: "foreign-key",
        message: `state file ${scratch.path} sealed under key ${key.id}, not this key ${other.id}`,
      },
    });
  });

  it("says a file whose ciphertext, tag or header was altered is corrupt", async () => {
    const file = await written();
    for (const at of [HEADER_BYTES, file.length - 1, HEADER_BYTES - 5 /* IV */]) {
      const altered = Buffer.from(file);
      altered[at]! ^= 0x01;
      writeFileSync(scratch.path, altered);
      expect(await readStateFile(options())).toEqual({
        ok: false,
        error: {
          kind: "corrupt",
          message: `state file ${scratch.path} does not authenticate under this key: altered or damaged`,
        },
      });
    }
    // Bytes after the base are its journal (ADR 79): what does not open there stops the replay.
    writeFileSync(scratch.path, Buffer.concat([file, Buffer.from([0])]));
    expect(await readStateWithJournal(options())).toEqual({
      ok: true,
      value: {
        state,
        base: { iv: ivOf(file), bytes: file.length },
        journal: {
          records: 0,
          bytes: 0,
          torn: false,
          stopped: {
            kind: "corrupt",
            message: `state file ${scratch.path} record 1 has no record's magic bytes`,
          },
        },
      },
    });
  });

  it("says an authentic file whose document does not decode is malformed", async () => {
    const doc = encodeState(state);
    const cases: Buffer[] = [
      Buffer.from([0, 0]),
      Buffer.concat([Buffer.from([0, 0, 0, 5]), Buffer.from("{oops")]),
      Buffer.concat([Buffer.from([0, 0, 0, 2]), Buffer.from("{}")]),
      Buffer.concat([doc, Buffer.from("x")]),
      doc.subarray(0, doc.length - 1),
      encodeState({ ...state, watches: { ...state.watches, secrets: [] } }),
      encodeState({ ...state, secrets: [[...state.secrets][0]!, [...state.secrets][0]!] }),
    ];
    for (const plaintext of cases) {
      writeFileSync(scratch.path, seal(plaintext, key));
      expect(await kindOf()).toBe("malformed");
    }
  });

  it("keeps the App Secrets in columns, sorted by namespace then name, whatever the order given", async () => {
    const reversed = { ...state, secrets: [...state.secrets].reverse() };
    await written(reversed);
    expect(await readStateFile(options())).toEqual({ ok: true, value: state });
    const doc = encodeState(reversed);
    const skeleton = JSON.parse(doc.toString("utf8", 4, 4 + doc.readUInt32BE(0))) as {
      secrets: unknown;
    };
    expect(skeleton.secrets).toEqual({
      namespaces: "tenant-a tenant-b",
      secretCounts: [2, 1],
      names: "app-000000 app-000002 app-000001",
      resourceVersions: "100 102 101",
      keyCounts: [2, 2, 2],
      keys: "token tls.key token tls.key token tls.key",
      lengths: [48, 48, 48, 48, 48, 48],
    });
  });

  it("keeps a value read for its presence only as length -1, without bytes (ADR 68)", async () => {
    const [first, ...rest] = state.secrets;
    const unkept = {
      ...state,
      secrets: [{ ...first!, data: { ...first!.data, seen: UNKEPT_VALUE } }, ...rest],
    };
    await written(unkept);
    expect(await readStateFile(options())).toEqual({ ok: true, value: unkept });
    const doc = encodeState(unkept);
    const skeleton = JSON.parse(doc.toString("utf8", 4, 4 + doc.readUInt32BE(0))) as {
      secrets: { lengths: number[] };
    };
    expect(skeleton.secrets.lengths).toEqual([48, 48, -1, 48, 48, 48, 48]);
    writeFileSync(
      scratch.path,
      seal(
        patched(unkept, (c) => (c.lengths = [48, 48, -2, 48, 48, 48, 48])),
        key,
      ),
    );
    expect(await kindOf()).toBe("malformed");
  });

  it("says malformed for App Secret columns that disagree, in any way", async () => {
    const patches: ((c: Record<string, unknown>) => void)[] = [
      (c) => (c.secretCounts = [3]),
      (c) => (c.namespaces = "tenant-a  tenant-b"),
      (c) => (c.namespaces = "tenant-b tenant-a"),
      (c) => (c.namespaces = "tenant-a tenant-a"),
      (c) => (c.secretCounts = [3, 0]),
      (c) => (c.secretCounts = ["2", 1]),
      (c) => (c.secretCounts = [1.5, 1.5]),
      (c) => (c.names = "app-000002 app-000000 app-000001"),
      (c) => (c.names = "app-000000 app-000000 app-000001"),
      (c) => (c.names = "app-000000 app-000002"),
      (c) => (c.names = "app-000000 app-000002 app-000001 app-000003"),
      (c) => (c.names = 5),
      (c) => (c.resourceVersions = "100 102"),
      (c) => (c.resourceVersions = "100  101"),
      (c) => (c.keyCounts = [2, 2]),
      (c) => (c.keyCounts = [2, 2, 1]),
      (c) => (c.keyCounts = [2, 2, -2]),
      (c) => (c.keys = "token token token tls.key token tls.key"),
      (c) => (c.keys = "token tls.key token tls.key token"),
      (c) => (c.lengths = [48, 48, 48, 48, 48]),
      (c) => (c.lengths = [48, 48, 48, 48, 48, 49]),
      (c) => (c.lengths = [-48, 48, 48, 48, 48, 144]),
      (c) => (c.lengths = "48"),
      (c) => delete c.keys,
    ];
    const kinds: string[] = [];
    for (const patch of patches) {
      writeFileSync(scratch.path, seal(patched(state, patch), key));
      kinds.push(await kindOf());
    }
    expect(kinds).toEqual(patches.map(() => "malformed"));
    // The unpatched document reads back.
    writeFileSync(
      scratch.path,
      seal(
        patched(state, () => {}),
        key,
      ),
    );
    expect(await kindOf()).toBe("ok");
  });

  it("refuses to write a name, key or resourceVersion a column cannot hold", async () => {
    const [first, ...rest] = state.secrets;
    for (const bad of [
      { ...first!, name: "two words" },
      { ...first!, namespace: "" },
      { ...first!, resourceVersion: "1 2" },
      { ...first!, data: { "a key": "v" } },
    ]) {
      const w = await writeStateFile(scratch.path, key, { ...state, secrets: [bad, ...rest] });
      expect(w.ok ? "written" : w.error.message.replace(/: a Secret's .*/, "")).toBe(
        `encoding the state for ${scratch.path}`,
      );
    }
  });

  it("refuses a state older than the max age", async () => {
    await written();
    expect(await readStateFile(options({ now: state.savedAt + HOUR + 1 }))).toEqual({
      ok: false,
      error: {
        kind: "too-old",
        message: `state file ${scratch.path} saved 3600 s ago, more than the 3600 s allowed`,
      },
    });
    expect(await kindOf({ now: state.savedAt + HOUR })).toBe("ok");
  });

  it("refuses a state saved more than 5 minutes after now, however long the max age", async () => {
    await written();
    const ahead = (ms: number) => options({ now: state.savedAt - ms, maxAgeMs: 24 * HOUR });
    expect(await readStateFile(ahead(FUTURE_SKEW_MS + 60_000))).toEqual({
      ok: false,
      error: {
        kind: "saved-in-future",
        message: `state file ${scratch.path} saved 360 s after now by this clock, more than the 300 s of clock skew allowed`,
      },
    });
    expect(FUTURE_SKEW_MS).toBe(5 * 60_000);
    expect(await kindOf(ahead(FUTURE_SKEW_MS + 1))).toBe("saved-in-future");
    expect(await kindOf(ahead(FUTURE_SKEW_MS))).toBe("ok");
  });

  it("refuses a file of format 1, written before states had a generation, by its header", async () => {
    writeFileSync(scratch.path, FORMAT_1_FILE);
    const formatOneKey = new StateKey(Buffer.from(FORMAT_1_KEY, "hex"));
    expect(await readStateFile(options({ key: formatOneKey }))).toEqual({
      ok: false,
      error: {
        kind: "old-version",
        message: `state file ${scratch.path} format version 1, older than ${FORMAT_VERSION}`,
      },
    });
  });

  it("refuses a file of format 2, one skeleton object per App Secret, by its header", async () => {
    writeFileSync(scratch.path, FORMAT_2_FILE);
    const formatTwoKey = new StateKey(Buffer.from(FORMAT_1_KEY, "hex"));
    expect(await readStateFile(options({ key: formatTwoKey }))).toEqual({
      ok: false,
      error: {
        kind: "old-version",
        message: `state file ${scratch.path} format version 2, older than ${FORMAT_VERSION}`,
      },
    });
  });

  it("refuses a state written under another configuration, naming what differs", async () => {
    await written();
    const other = (patch: Parameters<typeof stateConfig>[0]) =>
      options({ config: stateConfig(patch) });
    const flags = {
      registryNamespace: "mirror",
      registryName: "registry",
      registryKey: "registry.json",
      secretNamespaces: ["tenant-a", "tenant-b"],
      secretSelector: "replica-mirror/app=true",
    };
    // The namespaces in another order: the same configuration.
    expect(await kindOf({ config: stateConfig(flags) })).toBe("ok");
    const messages: string[] = [];
    for (const patch of [
      { registryNamespace: "other" },
      { registryName: "other" },
      { registryKey: "other.json" },
      { secretNamespaces: ["tenant-a"] },
      { secretNamespaces: [] },
      { secretSelector: undefined },
      { secretSelector: "replica-mirror/app=yes" },
      { serveCredentials: true },
      { serveCertificates: true },
    ]) {
      const r = await readStateFile(other({ ...flags, ...patch }));
      expect(r.ok ? "ok" : r.error.kind).toBe("other-config");
      if (!r.ok) messages.push(r.error.message.replace(`state file ${scratch.path} `, ""));
    }
    expect(messages).toEqual([
      "written under Registry namespace 'mirror', configured now: 'other'",
      "written under Registry name 'registry', configured now: 'other'",
      "written under Registry key 'registry.json', configured now: 'other.json'",
      "written under App Secret scopes namespaces tenant-a,tenant-b, configured now: namespaces tenant-a",
      "written under App Secret scopes namespaces tenant-a,tenant-b, configured now: cluster-wide",
      "written under label selector 'replica-mirror/app=true', configured now: none",
      "written under label selector 'replica-mirror/app=true', configured now: 'replica-mirror/app=yes'",
      "written under --serve-credentials false, configured now: true",
      "written under --serve-certificates false, configured now: true",
    ]);
  });
});

describe("readStateFile on damaged files", () => {
  it("says truncated for a valid file cut at every length", async () => {
    const file = await written(sampleState({ secrets: 2, valueBytes: 16 }));
    const kinds = new Set<string>();
    for (let length = 0; length < file.length; length += 1) {
      writeFileSync(scratch.path, file.subarray(0, length));
      kinds.add(await kindOf());
    }
    expect([...kinds]).toEqual(["truncated"]);
  });

  it("gives an error value, never the state nor a throw, for any set of flipped bytes", async () => {
    const file = await written(sampleState({ secrets: 2, valueBytes: 16 }));
    const flip = fc.record({
      at: fc.nat({ max: file.length - 1 }),
      mask: fc.integer({ min: 1, max: 255 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(flip, { minLength: 1, maxLength: 8 }), async (flips) => {
        const damaged = Buffer.from(file);
        for (const { at, mask } of flips) damaged[at]! ^= mask;
        if (damaged.equals(file)) return; // flips that cancel out
        writeFileSync(scratch.path, damaged);
        const r = await readStateFile(options());
        expect(r.ok).toBe(false);
        if (!r.ok) expect(STATE_ERROR_KINDS).toContain(r.error.kind);
        // Only the header can make it anything but corrupt; past it, authentication decides.
        if (!r.ok && flips.every((f) => f.at >= HEADER_BYTES)) expect(r.error.kind).toBe("corrupt");
      }),
      { numRuns: 300 },
    );
  });

  it("gives an error value for any bytes at all", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
        writeFileSync(scratch.path, bytes);
        const r = await readStateFile(options());
        expect(r.ok).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it("decodes any authentic plaintext to a state or a refusal, never a throw", async () => {
    const doc = encodeState(state);
    const plaintexts = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.json().map((j) => {
        const json = Buffer.from(j);
        const length = Buffer.alloc(4);
        length.writeUInt32BE(json.length);
        return Buffer.concat([length, json]);
      }),
      fc
        .record({ at: fc.nat({ max: doc.length - 1 }), mask: fc.integer({ min: 1, max: 255 }) })
        .map(({ at, mask }) => {
          const altered = Buffer.from(doc);
          altered[at]! ^= mask;
          return altered;
        }),
    );
    await fc.assert(
      fc.asyncProperty(plaintexts, async (plaintext) => {
        writeFileSync(scratch.path, seal(plaintext, key));
        const r = await readStateFile(options());
        // A flip inside a byte string or a name leaves a valid document with other data: that is
        // GCM's to catch, not the document's. Anything else is refused.
        if (!r.ok)
          expect(["malformed", "too-old", "saved-in-future", "other-config"]).toContain(
            r.error.kind,
          );
      }),
      { numRuns: 300 },
    );
  });
});
