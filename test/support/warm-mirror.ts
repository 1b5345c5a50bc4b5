// Mirrors over fake list-watches for the warm-start tests: one started warm from saved inputs,
// with watches that never answer (what the state file alone gives a start), and one that keeps
// what each published Snapshot would have a state file save.

import { StreamingLists } from "../../src/kube/cache/streaming-lists.ts";
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

/**
 * A Mirror over two fake list-watches (started by the caller) whose one sink keeps, for each
 * Snapshot published, the inputs it reflects: what a state keeper would save (null: not one
 * whole, nothing saved).
 */
export function savingMirror(
  registry: FakeListWatch,
  secrets: FakeListWatch,
  options: { readonly serveCredentials?: boolean } = {},
): { readonly mirror: Mirror; readonly published: (MirrorInputs | null)[] } {
  const published: (MirrorInputs | null)[] = [];
  const mirror = new Mirror({
    registry: registrySource(registry),
    secrets: { scopes: [{ namespace: null, listWatch: secrets }] },
    holder: new SnapshotHolder(),
    watchTimeoutSeconds: 60,
    sinks: [
      { name: "saver", publish: (_, reflected) => published.push(reflected?.inputs() ?? null) },
    ],
    reflector: { streamingLists: new StreamingLists(false) },
    ...options,
  });
  return { mirror, published };
}
