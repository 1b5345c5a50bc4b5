import type { Envtest } from "@replica-mirror/envtest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listApps } from "../../src/snapshot/lookup.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import { credentialApp, envtestFor, writeRegistry, writeSecret } from "../support/world.ts";

let envtest: Envtest;
let m: TestSidecar | undefined;

beforeEach(async () => {
  envtest = await envtestFor();
});
afterEach(async () => {
  await m?.stop();
  m = undefined;
  await envtest.close();
});

// Credentials declared and served: the mirror keeps the values this test follows (ADR 68).
const shop = credentialApp("shop", "tenant-a");
const blog = credentialApp("blog", "tenant-b");

/** Each App of a published Snapshot with its readiness and decoded value. */
const shown = (s: Snapshot) =>
  listApps(s).map((a) => {
    const value = a.secretValue === null ? "-" : Buffer.from(a.secretValue, "latin1").toString();
    return `${a.name} ${a.reason ?? "ready"} ${value}`;
  });

describe("Registry adoption and rebuild", () => {
  it("publishes a Registry once the Secrets it adds are fetched, and Secret changes meanwhile", async () => {
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "s1" });
    writeSecret(envtest, "tenant-b", "blog-credentials", { token: "b1" });
    writeRegistry(envtest, [shop]);
    const published: Snapshot[] = [];
    m = await startTestSidecar(envtest, {
      flags: ["--serve-credentials", "true"],
      // Long watches: no reconnect may be slowed down by the latency below.
      watchTimeoutSeconds: 60,
      observer: { published: (p) => published.push(p.snapshot) },
    });
    await waitUntil(() => m!.holder.current() ?? undefined);
    await waitUntil(() => (envtest.openWatches === 2 ? true : undefined));
    await m.mirror.idle();
    const first = published.length;
    // Requests, and so the fetch of blog's Secret, take 800 ms; open watches are not delayed.
    envtest.faults.setLatency(800);
    writeRegistry(envtest, [shop, blog]);
    writeSecret(envtest, "tenant-a", "shop-credentials", { token: "s2" });
    await waitUntil(() => (m!.holder.current()!.apps.size === 2 ? true : undefined), {
      timeoutMs: 5_000,
    });
    await m.mirror.idle();
    expect(published.slice(first).map(shown)).toEqual([
      ["shop ready s2"],
      ["blog ready b1", "shop ready s2"],
    ]);
  });
});
