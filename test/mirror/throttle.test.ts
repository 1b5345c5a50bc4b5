// A Registry edit made while the API server throttles (429 with Retry-After: R) converges within
// R + 4 s of the throttling ending, however long it lasted: the retries of the fetch it needs wait
// what the server asked, never a schedule that grew while it was throttled. R + 2 s is the fleet's
// target (ADR 17); 2 s more hold on a busy two-core machine, and a schedule grown over 9 s of
// throttling (1, 2, 5, 10 s) would retry 18 s after the edit, 9 s after the throttling ended.

import type { Envtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get } from "../support/http.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import { APP_NS, envtestFor, writeRegistry, writeSecret } from "../support/world.ts";

const RETRY_AFTER_S = 2;
const THROTTLED_MS = 9_000;

let envtest: Envtest;
let sidecar: TestSidecar;

beforeAll(async () => {
  envtest = await envtestFor();
  writeSecret(envtest, APP_NS, "shop-credentials", { token: "t" });
  writeSecret(envtest, APP_NS, "late-credentials", { token: "t" });
  writeRegistry(envtest, [{ name: "shop", hostnames: ["shop.example.com"], namespace: APP_NS }]);
  // The production backoff and retry schedule: what is under test.
  sidecar = await startTestSidecar(envtest, { reflector: "production", watchTimeoutSeconds: 60 });
}, 30_000);

afterAll(async () => {
  await sidecar?.stop();
  await envtest?.close();
});

const routes = async (host: string) =>
  (await get(sidecar.data.port, "/v1/route", { host })).status === 200;

describe("a Registry edit under throttling", () => {
  it(`converges within Retry-After + 4 s of the throttling ending, after ${THROTTLED_MS / 1000} s of it`, async () => {
    await waitUntil(async () => ((await routes("shop.example.com")) ? true : undefined));
    envtest.faults.throttle({
      verbs: ["get", "list", "watch"],
      share: 1,
      retryAfterSeconds: RETRY_AFTER_S,
      forMs: THROTTLED_MS,
    });
    const throttledAt = performance.now();
    // The watch delivers the edit; the Secret it adds must be fetched, and is throttled.
    writeRegistry(envtest, [
      { name: "shop", hostnames: ["shop.example.com"], namespace: APP_NS },
      { name: "late", hostnames: ["late.example.com"], namespace: APP_NS },
    ]);
    await waitUntil(async () => ((await routes("late.example.com")) ? true : undefined), {
      timeoutMs: THROTTLED_MS + 60_000,
      intervalMs: 50,
      what: "the new App to route",
    });
    const afterThrottling = performance.now() - throttledAt - THROTTLED_MS;
    expect(afterThrottling).toBeLessThan((RETRY_AFTER_S + 4) * 1000);
  }, 120_000);
});
