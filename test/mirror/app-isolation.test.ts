// One malformed App entry refuses that App only (README, "The Registry document"): the others
// apply, and the refused one keeps its last good version.

import type { Envtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, getJson, metricValue } from "../support/http.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import {
  APP_NS,
  type AppInput,
  envtestFor,
  REGISTRY_API_VERSION,
  registryDoc,
  writeRegistryValue,
  writeSecret,
} from "../support/world.ts";

const APPS = 1_000;
const BROKEN = new Set([7, 500, 993]);
const app = (i: number, version: string): AppInput => ({
  name: `app-${i}`,
  hostnames: [`app-${i}.example.com`],
  namespace: APP_NS,
  upstream: `http://app-${i}-${version}:8080`,
});
const upstreams = (version: string) => Array.from({ length: APPS }, (_, i) => app(i, version));

let envtest: Envtest;
let sidecar: TestSidecar;

beforeAll(async () => {
  envtest = await envtestFor();
  for (let i = 0; i < APPS; i++)
    writeSecret(envtest, APP_NS, `app-${i}-credentials`, { token: "t" });
  writeRegistryValue(envtest, JSON.stringify(registryDoc(upstreams("v1"))));
  sidecar = await startTestSidecar(envtest);
}, 30_000);

afterAll(async () => {
  await sidecar?.stop();
  await envtest?.close();
});

const routedTo = async (i: number): Promise<string | undefined> => {
  const r = await get(sidecar.data.port, "/v1/route", { host: `app-${i}.example.com` });
  return r.headers["x-mirror-upstream"] as string | undefined;
};

describe("a Registry with invalid App entries", () => {
  it("applies the valid Apps' newest data, keeps the last good version of each invalid one, and lists why", async () => {
    await waitUntil(async () =>
      (await routedTo(APPS - 1)) === `http://app-${APPS - 1}-v1:8080` ? true : undefined,
    );
    // Every App moves to v2; three entries are broken in three ways.
    const doc = registryDoc(upstreams("v2"));
    const [a, b, c] = [...BROKEN].map((i) => doc.apps[i]!);
    a!.hostnames = ["app-7.example.com:8443"];
    b!.secretRef = { name: "app-500-credentials" };
    c!.upstream = `http://${"u".repeat(2_100)}`;
    writeRegistryValue(envtest, JSON.stringify({ ...doc, apiVersion: REGISTRY_API_VERSION }));
    await waitUntil(
      async () => ((await routedTo(0)) === "http://app-0-v2:8080" ? true : undefined),
      {
        what: "the new Registry",
      },
    );
    const routed: string[] = [];
    for (let i = 0; i < APPS; i++) routed.push((await routedTo(i)) ?? "none");
    expect(
      routed.filter((u, i) => u !== `http://app-${i}-${BROKEN.has(i) ? "v1" : "v2"}:8080`),
    ).toEqual([]);
    const snapshot = await getJson<{ registry: { refusedApps: unknown[]; error: string | null } }>(
      sidecar.ops.port,
      "/v1/snapshot",
    );
    expect(snapshot.registry).toMatchObject({
      error: null,
      refusedApps: [
        { index: 7, name: "app-7", reason: "hostnames[0]: port not allowed", kept: true },
        {
          index: 500,
          name: "app-500",
          reason: "secretRef.key: Invalid input: expected string, received undefined",
          kept: true,
        },
        { index: 993, name: "app-993", reason: "upstream: at most 2048 characters", kept: true },
      ],
    });
    const metrics = (await get(sidecar.ops.port, "/metrics")).body;
    expect(metricValue(metrics, "replica_mirror_registry_refused_apps")).toBe(3);
  }, 60_000);
});
