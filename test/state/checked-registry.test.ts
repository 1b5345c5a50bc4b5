// The Registry's check in the state file (ADR 77): kept whole beside the value, read back frozen
// as the check builds it, and refused with the rest of the file when it is altered or its columns
// disagree: a warm start adopts only a check this replica's key sealed, entry for entry.

import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { CheckedRegistry } from "../../src/mirror/inputs.ts";
import { parseRegistryDocument } from "../../src/registry/parse.ts";
import { REGISTRY_RULES } from "../../src/registry/rules.ts";
import { encodeState } from "../../src/state/document.ts";
import { type ReadStateOptions, readStateFile } from "../../src/state/read-state.ts";
import { HEADER_BYTES, seal } from "../../src/state/seal.ts";
import type { State } from "../../src/state/state.ts";
import { writeStateFile } from "../../src/state/write-state.ts";
import { CONFIG, newKey, sampleState, scratchPerTest } from "./fixtures.ts";

const key = newKey();
const scratch = scratchPerTest();

/** A check of a document with every field an App may have, and without each optional one. */
function sampleCheck(): CheckedRegistry {
  const parsed = parseRegistryDocument(
    {
      apiVersion: "replica-mirror/v1",
      apps: [
        {
          name: "shop",
          hostnames: ["Shop.Example.com", "*.shop.example.com", "shop.example.com"],
          secretRef: { namespace: "tenant-a", name: "shop-credentials", key: "token" },
          upstream: "http://10.0.0.12:8080/a path",
          credential: { prefix: "Bearer " },
          tls: { secretRef: { name: "shop-tls" } },
        },
        { name: "blog", hostnames: ["blog.example.com"], secretRef: { name: "b", key: "k.1" } },
        { name: "Bad", hostnames: ["bad.example.com"], secretRef: { name: "b", key: "k" } },
        {
          name: "docs",
          hostnames: ["xn--dcs-0na.example.com"],
          secretRef: { namespace: "tenant-b", name: "docs", key: "token" },
          upstream: "http://10.0.0.12:8080/a path",
          credential: {},
          tls: { secretRef: { namespace: "tenant-c", name: "docs-tls" } },
        },
      ],
    },
    { defaultNamespace: "mirror", allowLocalUpstreams: false },
  );
  if (!parsed.ok) throw new Error(parsed.error.message);
  return {
    under: {
      rules: REGISTRY_RULES,
      defaultNamespace: "mirror",
      allowLocalUpstreams: false,
      maxDecompressedBytes: 4096,
    },
    contentHash: "00112233aabbccdd",
    registry: parsed.value.registry,
    refused: parsed.value.refused,
  };
}

const state: State = { ...sampleState(), checked: sampleCheck() };

const options = (): ReadStateOptions => ({
  path: scratch.path,
  key,
  maxAgeMs: 3_600_000,
  now: state.savedAt + 60_000,
  config: CONFIG,
});

/** The document of `state` with the check in its skeleton changed by `patch`. */
function patched(patch: (columns: Record<string, unknown>) => void): Buffer {
  const doc = encodeState(state);
  const end = 4 + doc.readUInt32BE(0);
  const skeleton = JSON.parse(doc.toString("utf8", 4, end)) as { checked: Record<string, unknown> };
  patch(skeleton.checked);
  const json = Buffer.from(JSON.stringify(skeleton), "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length);
  return Buffer.concat([length, json, doc.subarray(end)]);
}

describe("a state file's Registry check", () => {
  it("is read back whole, its Apps frozen as the check leaves them", async () => {
    const w = await writeStateFile(scratch.path, key, state);
    if (!w.ok) throw new Error(w.error.message);
    const read = await readStateFile(options());
    const apps = read.ok ? read.value.checked?.registry.apps : undefined;
    expect({
      read,
      frozen: apps?.every((a) => Object.isFrozen(a) && Object.isFrozen(a.secretRef)),
    }).toEqual({ read: { ok: true, value: state }, frozen: true });
  });

  it("keeps each namespace, key, upstream and prefix once", () => {
    const doc = encodeState(state);
    const skeleton = JSON.parse(doc.toString("utf8", 4, 4 + doc.readUInt32BE(0)));
    expect(skeleton.checked.strings).toEqual([
      "tenant-a",
      "token",
      "http://10.0.0.12:8080/a path",
      "Bearer ",
      "mirror",
      "k.1",
      "tenant-b",
      "",
      "tenant-c",
    ]);
  });

  it("keeps a column every App shares as one number, and reads it back for each", async () => {
    const parsed = parseRegistryDocument(
      {
        apiVersion: "replica-mirror/v1",
        apps: ["a", "b", "c"].map((name) => ({
          name,
          hostnames: [`${name}.example.com`],
          secretRef: { name, key: "token" },
          upstream: "http://10.0.0.12:8080",
        })),
      },
      { defaultNamespace: "mirror", allowLocalUpstreams: false },
    );
    if (!parsed.ok) throw new Error(parsed.error.message);
    const shared: State = {
      ...state,
      checked: { ...sampleCheck(), registry: parsed.value.registry, refused: [] },
    };
    const doc = encodeState(shared);
    const { checked } = JSON.parse(doc.toString("utf8", 4, 4 + doc.readUInt32BE(0)));
    await writeStateFile(scratch.path, key, shared);
    const columns = ["hostnameCounts", "secretNamespaces", "secretKeys", "upstreams", "prefixes"];
    expect({
      columns: columns.map((k) => checked[k]),
      tls: checked.tlsNamespaces,
      read: await readStateFile(options()),
    }).toEqual({
      columns: [1, 0, 1, 2, -1],
      tls: -1,
      read: { ok: true, value: shared },
    });
  });

  it("makes the file corrupt when any byte of it is altered", async () => {
    const doc = encodeState(state);
    const at = doc.indexOf('"checked"');
    const kinds: string[] = [];
    for (const offset of [at, at + 40, at + 400]) {
      const sealed = seal(doc, key);
      sealed[HEADER_BYTES + offset]! ^= 0x01;
      writeFileSync(scratch.path, sealed);
      const read = await readStateFile(options());
      kinds.push(read.ok ? "ok" : read.error.kind);
    }
    expect(kinds).toEqual(["corrupt", "corrupt", "corrupt"]);
  });

  it("makes an authentic file malformed when its columns disagree, in any way", async () => {
    const patches: Record<string, (c: Record<string, unknown>) => void> = {
      "an App without a hostname": (c) => {
        c.hostnameCounts = [3, 0, 2];
      },
      "a name too many": (c) => {
        c.names = `${c.names} more`;
      },
      "an empty name": (c) => {
        c.names = (c.names as string).replace("blog", "");
      },
      "a hostname too few": (c) => {
        c.hostnames = (c.hostnames as string).split(" ").slice(1).join(" ");
      },
      "a string it does not hold": (c) => {
        c.secretKeys = [1, 99, 1];
      },
      "an upstream below NONE": (c) => {
        c.upstreams = [2, -2, 2];
      },
      "a TLS name too many": (c) => {
        c.tlsNames = `${c.tlsNames} extra`;
      },
      "one number for a column that names no string": (c) => {
        c.secretKeys = 99;
      },
      "one hostname count of none": (c) => {
        c.hostnameCounts = 0;
      },
      "a column too short": (c) => {
        c.prefixes = [3];
      },
      "a number that is not an index": (c) => {
        c.tlsNamespaces = [0.5, -1, 8];
      },
      "a contentHash that is not one": (c) => {
        c.contentHash = "not-hex";
      },
      "no rules": (c) => {
        c.under = { defaultNamespace: "mirror" };
      },
      "a refusal without its reason": (c) => {
        c.refused = [{ index: 2, name: "Bad" }];
      },
    };
    const seen: Record<string, string> = {};
    for (const [what, patch] of Object.entries(patches)) {
      writeFileSync(scratch.path, seal(patched(patch), key));
      const read = await readStateFile(options());
      seen[what] = read.ok ? "ok" : read.error.kind;
    }
    expect(seen).toEqual(Object.fromEntries(Object.keys(patches).map((k) => [k, "malformed"])));
  });

  it("keeps the Registry kept beside a refused value as it keeps a check, read back whole and frozen", async () => {
    const { checked, ...rest } = state;
    const refused: State = {
      ...rest,
      registry: { present: true, resourceVersion: "9", value: "{not json" },
      kept: { under: checked!.under, beside: "9", registry: checked!.registry },
    };
    const whole = await writeStateFile(scratch.path, key, refused);
    if (!whole.ok) throw new Error(whole.error.message);
    const read = await readStateFile(options());
    const apps = read.ok ? read.value.kept?.registry.apps : undefined;
    const doc = encodeState(refused);
    const skeleton = JSON.parse(doc.toString("utf8", 4, 4 + doc.readUInt32BE(0)));
    expect({
      read,
      frozen: apps?.every((a) => Object.isFrozen(a) && Object.isFrozen(a.secretRef)),
      columns: Object.keys(skeleton.kept),
    }).toEqual({
      read: { ok: true, value: refused },
      frozen: true,
      columns: [
        "under",
        "beside",
        "strings",
        "names",
        "hostnameCounts",
        "hostnames",
        "secretNamespaces",
        "secretNames",
        "secretKeys",
        "upstreams",
        "prefixes",
        "tlsNamespaces",
        "tlsNames",
      ],
    });
  });

  it("is absent from a state without one, which reads back without it", async () => {
    const { checked: _, ...without } = state;
    await writeStateFile(scratch.path, key, without);
    const read = await readStateFile(options());
    expect({ read, has: read.ok && "checked" in read.value }).toEqual({
      read: { ok: true, value: without },
      has: false,
    });
  });
});
