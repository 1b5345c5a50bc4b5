// A warm start adopts the saved Registry a turn before it seeds the saved App Secrets and
// publishes (ADR 73): a sink that prepares routes on a later turn, as the data thread does, has
// them ready before the first Snapshot, and its thread indexes them while this one seeds. The
// saved inputs are not held once seeded.

import { describe, expect, it } from "vitest";
import type { MirrorInputs } from "../../src/mirror/inputs.ts";
import { Mirror, type SnapshotSink } from "../../src/mirror/mirror.ts";
import { ok } from "../../src/result.ts";
import { v8FullCollection } from "../../src/runtime/start-up-collection.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { FakeListWatch } from "../support/fake-list-watch.ts";
import { waitUntil } from "../support/wait.ts";
import { REGISTRY_NS, registryDoc, registrySource } from "../support/world.ts";

const inputs: MirrorInputs = {
  registry: {
    present: true,
    resourceVersion: "10",
    value: JSON.stringify(registryDoc([{ name: "shop", hostnames: ["shop.example.com"] }])),
  },
  secrets: [
    {
      namespace: REGISTRY_NS,
      name: "shop-credentials",
      resourceVersion: "9",
      data: { token: "t" },
    },
  ],
  watches: { registry: "10", secrets: [{ namespace: null, resourceVersion: "10" }] },
};

describe("a warm start", () => {
  it("lets a sink prepare the saved Registry's routes on a turn before the first Snapshot", async () => {
    const seen: string[] = [];
    const sink: SnapshotSink = {
      name: "turns",
      prepare(routes) {
        seen.push("prepare");
        setImmediate(() => seen.push(`routes ${[...routes().exact.keys()].join(",")}`));
      },
      publish(snapshot) {
        seen.push(`publish ${snapshot.revision}`);
      },
    };
    const mirror = new Mirror({
      registry: registrySource(new FakeListWatch()),
      secrets: { scopes: [{ namespace: null, listWatch: new FakeListWatch() }] },
      holder: new SnapshotHolder(),
      watchTimeoutSeconds: 60,
      sinks: [sink],
      warm: { inputs, savedAt: Date.now() },
    });
    mirror.start();
    try {
      await waitUntil(() => seen.length >= 3);
      await mirror.idle();
      expect(seen).toEqual(["prepare", "routes shop.example.com", "publish 1"]);
    } finally {
      await mirror.stop();
    }
  });

  it("holds the saved App Secrets no longer once it published them", async () => {
    const holder = new SnapshotHolder();
    const { mirror, saved } = warmMirror(holder);
    mirror.start();
    try {
      await waitUntil(() => holder.current() ?? undefined);
      await mirror.idle();
      expect(v8FullCollection()).toEqual(ok(undefined));
      expect({ revision: holder.current()?.revision, held: saved.deref() !== undefined }).toEqual({
        revision: 1,
        held: false,
      });
    } finally {
      await mirror.stop();
    }
  });
});

/** A mirror to start warm from a copy of `inputs`, and a weak reference to the copy's Secrets. */
function warmMirror(holder: SnapshotHolder): { mirror: Mirror; saved: WeakRef<object> } {
  const secrets = [...inputs.secrets];
  const mirror = new Mirror({
    registry: registrySource(new FakeListWatch()),
    secrets: { scopes: [{ namespace: null, listWatch: new FakeListWatch() }] },
    holder,
    watchTimeoutSeconds: 60,
    warm: { inputs: { ...inputs, secrets }, savedAt: Date.now() },
  });
  return { mirror, saved: new WeakRef(secrets) };
}
