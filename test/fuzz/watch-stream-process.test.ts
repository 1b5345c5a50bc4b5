// `serve` as a process fed garbage in its watch streams (envtest faults.injectGarbage), with
// lines split across writes or coalesced: it stays up, never backs off, and converges after each.

import type { Envtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, getJson, untilReady } from "../support/http.ts";
import { type SidecarProcess, startSidecarProcess } from "../support/process.ts";
import { waitUntil } from "../support/wait.ts";
import { envtestFor, kubeconfigFor } from "../support/world.ts";
import { APPS, writeApps } from "./watch-world.ts";

describe("`serve` as a process under garbage in the watch stream", () => {
  let envtest: Envtest;
  let kubeconfig: { path: string; remove: () => Promise<void> };
  let sidecar: SidecarProcess;

  beforeAll(async () => {
    envtest = await envtestFor();
    envtest.apply({ namespace: "tenant-a", name: "shop-credentials", data: { token: "s0" } });
    writeApps(envtest, APPS.length);
    kubeconfig = await kubeconfigFor(envtest);
    sidecar = await startSidecarProcess({
      kubeconfig: kubeconfig.path,
      watchTimeoutSeconds: 1,
      logLevel: "debug",
    });
  }, 30_000);
  afterAll(async () => {
    await sidecar?.stop();
    await envtest?.close();
    await kubeconfig?.remove();
  });

  const secretVersions = async () => {
    const r = await getJson<{ apps?: { name: string; secretResourceVersion: string | null }[] }>(
      sidecar.opsPort,
      "/v1/apps",
    );
    return Object.fromEntries((r.apps ?? []).map((a) => [a.name, a.secretResourceVersion]).sort());
  };
  const truthVersions = () =>
    Object.fromEntries(
      APPS.map((a) => [
        a.name,
        envtest.get(a.namespace, a.secret)?.metadata.resourceVersion ?? null,
      ]).sort(),
    );

  // The production backoff applies here: a second bad line before a watch ended normally backs
  // off (0.8 s, doubling to 30 s, reset after 2 minutes of health). So each bad line is sent to
  // watches that have just ended on their own timeout (--watch-timeout 1), as a rare glitch would be.
  const timeouts = (reflector: string) =>
    sidecar
      .logLines()
      .filter(
        (l) => l.msg === "watch restarted" && l.reason === "timeout" && l.reflector === reflector,
      ).length;

  it("stays up and converges through every garbage kind, lines split and coalesced", async () => {
    await untilReady(sidecar.opsPort);
    let step = 0;
    for (const mode of ["split", "coalesce"] as const) {
      envtest.faults.chunking({ mode, seed: 11 + step });
      for (const kind of ["bytes", "truncated", "non-json"] as const) {
        const seen = { registry: timeouts("registry"), secrets: timeouts("secrets/*") };
        await waitUntil(
          () =>
            timeouts("registry") > seen.registry &&
            timeouts("secrets/*") > seen.secrets &&
            envtest.openWatches === 2
              ? true
              : undefined,
          { timeoutMs: 10_000, what: "both watches to turn over on their own" },
        );
        expect(envtest.faults.injectGarbage(kind)).toBe(2);
        const app = APPS[step % APPS.length]!;
        if (step % 4 === 3) envtest.delete(app.namespace, app.secret);
        else
          envtest.apply({
            namespace: app.namespace,
            name: app.secret,
            data: { token: `v${step}` },
          });
        step++;
        await waitUntil(
          async () =>
            JSON.stringify(await secretVersions()) === JSON.stringify(truthVersions())
              ? true
              : undefined,
          { timeoutMs: 10_000, what: `convergence after ${kind} under ${mode}` },
        ).catch(async (e: unknown) => {
          throw new Error(
            `${String(e)}\nserved ${JSON.stringify(await secretVersions())} truth ${JSON.stringify(truthVersions())}\n${sidecar
              .output()
              .split("\n")
              .filter((l) => l.includes('"reflector"') || l.includes("Snapshot"))
              .join("\n")}`,
          );
        });
        expect(sidecar.alive()).toBe(true);
      }
    }
    expect((await get(sidecar.opsPort, "/healthz")).status).toBe(200);
    expect((await get(sidecar.opsPort, "/readyz")).status).toBe(200);
    const logs = sidecar.logLines();
    const decodes = logs.filter((l) => l.msg === "watch restarted" && l.reason === "decode").length;
    expect(decodes).toBe(12);
    expect(logs.filter((l) => l.msg === "backing off")).toEqual([]);
    expect(logs.filter((l) => typeof l.msg === "string" && /\(bug\)/.test(l.msg))).toEqual([]);
  }, 120_000);
});
