// A warm start with one App Secret watch per namespace: each resumed reflector knows the saved
// Secrets of its own namespace only, so a relist of one namespace (its resourceVersion expired)
// removes what that namespace lost and nothing of another's.

import { describe, expect, it } from "vitest";
import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
import type { MirrorInputs } from "../../src/mirror/inputs.ts";
import { Mirror } from "../../src/mirror/mirror.ts";
import { ok } from "../../src/result.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { listApps } from "../../src/snapshot/lookup.ts";
import { FakeListWatch, gone, page, secret } from "../support/fake-list-watch.ts";
import { waitUntil } from "../support/wait.ts";
import { registryDoc, registrySource } from "../support/world.ts";

const APPS = [
  { name: "a1", namespace: "tenant-a" },
  { name: "a2", namespace: "tenant-a" },
  { name: "b1", namespace: "tenant-b" },
];

const inputs: MirrorInputs = {
  registry: {
    present: true,
    resourceVersion: "10",
    value: JSON.stringify(
      registryDoc(APPS.map((a) => ({ ...a, hostnames: [`${a.name}.example.com`] }))),
    ),
  },
  secrets: APPS.map((a) => ({
    namespace: a.namespace,
    name: `${a.name}-credentials`,
    resourceVersion: "9",
    data: { token: "t" },
  })),
  watches: {
    registry: "10",
    secrets: [
      { namespace: "tenant-a", resourceVersion: "20" },
      { namespace: "tenant-b", resourceVersion: "30" },
    ],
  },
};

describe("a warm start watching App Secrets per namespace", () => {
  it("relists one namespace and loses only what that namespace lost", async () => {
    const holder = new SnapshotHolder();
    const [a, b] = [new FakeListWatch(), new FakeListWatch()];
    a.failWatch(gone);
    a.replyList(ok(page("21", [secret("a1-credentials", "9", { token: "t" }, "tenant-a")])));
    const mirror = new Mirror({
      registry: registrySource(new FakeListWatch()),
      secrets: {
        scopes: [
          { namespace: "tenant-a", listWatch: a },
          { namespace: "tenant-b", listWatch: b },
        ],
      },
      holder,
      watchTimeoutSeconds: 60,
      // A relist at once, as a list: the one scripted above.
      reflector: { streamingLists: new StreamingLists(false), relistSpreadMs: 0 },
      warm: { inputs, savedAt: Date.now() },
    });
    mirror.start();
    try {
      const ready = () => listApps(holder.current()!).map((app) => [app.name, app.ready] as const);
      const after = await waitUntil(() => {
        const now = ready();
        return now.some(([name, r]) => name === "a2" && !r) ? now : undefined;
      });
      expect(after).toEqual([
        ["a1", true],
        ["a2", false],
        ["b1", true],
      ]);
    } finally {
      await mirror.stop();
    }
  });
});
