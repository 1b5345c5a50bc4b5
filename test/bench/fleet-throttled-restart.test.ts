// The throttled-restart scenario (`npm run fleet:throttled-restart`) at a tiny size, so that a
// change to the sidecar or to the standalone API server that breaks the harness shows up here. The
// figures are not judged: only that every replica was measured through the restart.

import { describe, expect, it } from "vitest";
import { throttledRestart } from "../../bench/fleet/throttled-restart/scenario.ts";

describe("npm run fleet:throttled-restart", () => {
  it("measures two replicas through a restart losing the history and two throttled seconds", async () => {
    const result = await throttledRestart(
      {
        replicas: 2,
        apps: 10,
        secrets: 50,
        valueBytes: 64,
        closingMs: 100,
        downMs: 200,
        throttleSeconds: 2,
        retryAfterSeconds: 1,
        watchList: true,
        throttleWatches: false,
        convergeTimeoutSeconds: 20,
        artifact: "src",
      },
      () => {},
    );
    expect(
      result.replicas.map((r) => ({
        client: r.client,
        listed: r.firstGoodListMs !== null,
        seen: r.emptiedSeenMs !== null,
        expired: r.expired >= 1,
      })),
    ).toEqual(
      ["throttled-00", "throttled-01"].map((client) => ({
        client,
        listed: true,
        seen: true,
        expired: true,
      })),
    );
    expect(result.goalMs).toBe(3_000);
  }, 120_000);
});
