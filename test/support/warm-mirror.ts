// A Mirror started warm from saved inputs, with watches that never answer: what its first
// Snapshot serves is what the state file alone gives a start.

import type { MirrorInputs } from "../../src/mirror/inputs.ts";
import { Mirror } from "../../src/mirror/mirror.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { FakeListWatch } from "./fake-list-watch.ts";
import { waitUntil } from "./wait.ts";
import { registrySource } from "./world.ts";

/** The first Snapshot of a warm start from `saved`. */
export async function firstWarmSnapshot(saved: MirrorInputs): Promise<Snapshot> {
  const holder = new SnapshotHolder();
  const mirror = new Mirror({
    registry: registrySource(new FakeListWatch()),
    secrets: { scopes: [{ namespace: null, listWatch: new FakeListWatch() }] },
    holder,
    watchTimeoutSeconds: 60,
    warm: { inputs: saved, savedAt: Date.now() },
  });
  mirror.start();
  try {
    return await waitUntil(() => holder.current() ?? undefined);
  } finally {
    await mirror.stop();
  }
}
