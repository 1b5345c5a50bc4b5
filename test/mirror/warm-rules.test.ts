// A warm start serves the saved Registry value parsed again, under this start's rules: a state
// written while local upstreams were allowed routes none of them once a start forbids them
// (ADR 48).

import { describe, expect, it } from "vitest";
import type { MirrorInputs } from "../../src/mirror/inputs.ts";
import { Mirror } from "../../src/mirror/mirror.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { listApps } from "../../src/snapshot/lookup.ts";
import { FakeListWatch } from "../support/fake-list-watch.ts";
import { waitUntil } from "../support/wait.ts";
import { REGISTRY_NS, registryDoc, registrySource } from "../support/world.ts";

/** Saved inputs: a Registry with a local and a private upstream, both Secrets present. */
const inputs: MirrorInputs = {
  registry: {
    present: true,
    resourceVersion: "10",
    value: JSON.stringify(
      registryDoc([
        { name: "ops", hostnames: ["ops.example.com"], upstream: "http://127.0.0.1:9090" },
        { name: "shop", hostnames: ["shop.example.com"], upstream: "http://10.0.0.12:8080" },
      ]),
    ),
  },
  secrets: ["ops", "shop"].map((name) => ({
    namespace: REGISTRY_NS,
    name: `${name}-credentials`,
    resourceVersion: "9",
    data: { token: "t" },
  })),
  watches: { registry: "10", secrets: [{ namespace: null, resourceVersion: "10" }] },
};

/** What the first Snapshot of a warm start serves and refuses, under `allowLocalUpstreams`. */
async function warmStart(allowLocalUpstreams: boolean) {
  const holder = new SnapshotHolder();
  const mirror = new Mirror({
    registry: registrySource(new FakeListWatch(), { allowLocalUpstreams }),
    secrets: { scopes: [{ namespace: null, listWatch: new FakeListWatch() }] },
    holder,
    watchTimeoutSeconds: 60,
    warm: { inputs, savedAt: Date.now() },
  });
  mirror.start();
  try {
    const snapshot = await waitUntil(() => holder.current() ?? undefined);
    return {
      apps: listApps(snapshot).map((a) => [a.name, a.ready]),
      refused: snapshot.registry.refusedApps,
    };
  } finally {
    await mirror.stop();
  }
}

describe("a warm start", () => {
  it("refuses a saved App whose upstream is local unless this start allows it", async () => {
    expect({ forbidden: await warmStart(false), allowed: await warmStart(true) }).toEqual({
      forbidden: {
        apps: [["shop", true]],
        refused: [
          {
            index: 0,
            name: "ops",
            reason: "upstream: a loopback address is not allowed (--allow-local-upstreams)",
            kept: false,
          },
        ],
      },
      allowed: {
        apps: [
          ["ops", true],
          ["shop", true],
        ],
        refused: [],
      },
    });
  });
});
