// One malformed App entry refuses that App only (README, "The Registry document"): the others
// apply, and the refused one keeps its last good version. What a refusal repeats of the document
// is bounded, whatever the document holds.

import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
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
  sidecar = await startTestSidecar(envtest, {
    flags: ["--allow-local-upstreams", "false"],
    logLevel: "warn",
  });
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

  it("refuses a local upstream alone, and repeats a 20 MiB name as 64 characters and a digest in the log and /v1/snapshot", async () => {
    const name = "n".repeat(20 * 1024 * 1024);
    const doc = registryDoc([
      ...upstreams("v3"),
      {
        name: "ops",
        hostnames: ["ops.example.com"],
        namespace: APP_NS,
        upstream: `http://127.1:${sidecar.ops.port}`,
      },
      {
        name: "private",
        hostnames: ["private.example.com"],
        namespace: APP_NS,
        upstream: "http://10.0.0.12:8080",
      },
    ]);
    doc.apps.push({ name, hostnames: ["big.example.com"], secretRef: { name: "s", key: "k" } });
    for (const n of ["ops", "private"])
      writeSecret(envtest, APP_NS, `${n}-credentials`, { token: "t" });
    const value = gzipSync(JSON.stringify(doc));
    expect(value.length).toBeLessThan(64 * 1024);
    const logged = sidecar.lines().length;
    writeRegistryValue(envtest, value);
    await waitUntil(
      async () => ((await routedTo(0)) === "http://app-0-v3:8080" ? true : undefined),
      {
        what: "the new Registry",
      },
    );
    const hosts = ["ops.example.com", "private.example.com"];
    const answers = [];
    for (const host of hosts) {
      const r = await get(sidecar.data.port, "/v1/route", { host });
      answers.push([r.status, r.headers["x-mirror-reason"] ?? r.headers["x-mirror-app"]]);
    }
    expect(answers).toEqual([
      [404, "unknown-host"],
      [200, "private"],
    ]);
    const refusedApps = [
      {
        index: APPS,
        name: "ops",
        reason: "upstream: a loopback address is not allowed (--allow-local-upstreams)",
        kept: false,
      },
      {
        index: APPS + 2,
        name: `${"n".repeat(64)}…${createHash("sha256").update(name).digest("hex").slice(0, 8)}`,
        reason: "name: must be at most 63 characters",
        kept: false,
      },
    ];
    const status = await get(sidecar.ops.port, "/v1/snapshot");
    expect(status.body.length).toBeLessThan(4 * 1024);
    expect(JSON.parse(status.body).registry).toMatchObject({
      error: null,
      refusedApps,
      moreRefusedApps: 0,
    });
    const lines = sidecar.lines().slice(logged);
    const refusals = lines.filter((l) => l.includes("Registry App entries refused"));
    expect(refusals.map((l) => l.length < 4 * 1024)).toEqual([true]);
    const { time: _, pid: __, hostname: ___, ...line } = JSON.parse(refusals[0]!);
    expect(line).toEqual({
      level: 40,
      refusedApps,
      moreRefusedApps: 0,
      msg: "Registry App entries refused: the other Apps apply, and each refused one keeps its last good version",
    });
    expect(lines.filter((l) => l.length > 4 * 1024).map((l) => l.slice(0, 200))).toEqual([]);
    const metrics = (await get(sidecar.ops.port, "/metrics")).body;
    expect(metricValue(metrics, "replica_mirror_registry_refused_apps")).toBe(2);
  }, 60_000);
});
