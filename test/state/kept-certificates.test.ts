// The last good certificates a state keeps beside refused ones (ADR 92): read back whole and
// frozen, in the base and through the journal, and a file whose entry is malformed is refused.

import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { encodeState } from "../../src/state/document.ts";
import { type ReadStateOptions, readStateFile } from "../../src/state/read-state.ts";
import { seal } from "../../src/state/seal.ts";
import type { State } from "../../src/state/state.ts";
import { writeStateFile } from "../../src/state/write-state.ts";
import { CONFIG, keptCertificate, newKey, sampleState, scratchPerTest } from "./fixtures.ts";

const key = newKey();
const scratch = scratchPerTest();

const state: State = {
  ...sampleState(),
  certificates: [keptCertificate("blog", "01AB"), keptCertificate("shop", "02CD")],
};

const options = (): ReadStateOptions => ({
  path: scratch.path,
  key,
  maxAgeMs: 3_600_000,
  now: state.savedAt + 60_000,
  config: CONFIG,
});

describe("a state file's kept certificates", () => {
  it("are read back whole and frozen", async () => {
    const w = await writeStateFile(scratch.path, key, state);
    if (!w.ok) throw new Error(w.error.message);
    const read = await readStateFile(options());
    const kept = read.ok ? read.value.certificates : undefined;
    expect({
      read,
      frozen: kept?.every((k) => Object.isFrozen(k) && Object.isFrozen(k.served)),
    }).toEqual({ read: { ok: true, value: state }, frozen: true });
  });

  it("make an authentic file malformed when an entry is", async () => {
    const patches: Record<string, (entry: Record<string, unknown>) => void> = {
      "no hostname": (e) => {
        e.hostnames = [];
      },
      "an id that is not one": (e) => {
        e.id = "xyz";
      },
      "no key": (e) => {
        delete e.key;
      },
      "a time that is not a number": (e) => {
        e.notAfter = "soon";
      },
    };
    const seen: Record<string, string> = {};
    for (const [what, patch] of Object.entries(patches)) {
      const doc = encodeState(state);
      const end = 4 + doc.readUInt32BE(0);
      const skeleton = JSON.parse(doc.toString("utf8", 4, end));
      patch(skeleton.certificates[1]);
      const json = Buffer.from(JSON.stringify(skeleton), "utf8");
      const length = Buffer.alloc(4);
      length.writeUInt32BE(json.length);
      writeFileSync(scratch.path, seal(Buffer.concat([length, json, doc.subarray(end)]), key));
      const read = await readStateFile(options());
      seen[what] = read.ok ? "ok" : read.error.kind;
    }
    expect(seen).toEqual(Object.fromEntries(Object.keys(patches).map((k) => [k, "malformed"])));
  });
});
