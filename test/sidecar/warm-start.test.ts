// A replica that restarts while the API server is gone keeps routing (README, "The state file"):
// `serve` as a process with a state file, killed with SIGKILL as an OOM kill would, started
// again against an API server that is down, then back with changed data.

import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { get, metricValue, untilReady } from "../support/http.ts";
import { type SidecarProcess, startSidecarProcess } from "../support/process.ts";
import { identityOf } from "../support/tls-client.ts";
import { waitUntil } from "../support/wait.ts";
import {
  APP_NS,
  type AppInput,
  kubeconfigFor,
  writeRegistry,
  writeSecret,
} from "../support/world.ts";

const APPS = 1_000;
const apps: AppInput[] = Array.from({ length: APPS }, (_, i) => ({
  name: `app-${i}`,
  hostnames: [`app-${i}.example.com`],
  namespace: APP_NS,
  upstream: `http://app-${i}:8080`,
  // One App with a certificate: its key goes into the state file, sealed like any Secret value.
  ...(i === 0 ? { tls: "app-0-tls" } : {}),
}));
let certificate: TestCertificate;
const token = (i: number, tag = "t") => `${tag}-${i}-`.padEnd(64, "x");

let envtest: Envtest;
let kubeconfig: { path: string; remove: () => Promise<void> };
let dir: string;
let flags: string[];
const running: SidecarProcess[] = [];

beforeAll(async () => {
  envtest = await startEnvtest({ bookmarkIntervalMs: 200 });
  kubeconfig = await kubeconfigFor(envtest);
  writeRegistry(envtest, apps);
  for (let i = 0; i < APPS; i++)
    writeSecret(envtest, APP_NS, `app-${i}-credentials`, { token: token(i) });
  certificate = makeCertificate({ names: ["app-0.example.com"] });
  writeSecret(envtest, APP_NS, "app-0-tls", tlsSecretData(certificate));
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-warm-"));
  // What ships: the start-up is the bundle's, not the sources'.
  await promisify(execFile)(process.execPath, ["scripts/build.ts", "--outdir", join(dir, "dist")]);
  await writeFile(join(dir, "key"), randomBytes(32));
  flags = [
    "--state-file",
    join(dir, "state"),
    "--state-key-file",
    join(dir, "key"),
    "--serve-certificates",
    "true",
  ];
}, 180_000);

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

afterAll(async () => {
  await envtest?.close();
  await kubeconfig?.remove();
  await rm(dir, { recursive: true, force: true });
});

async function start(): Promise<SidecarProcess> {
  const s = await startSidecarProcess({
    kubeconfig: kubeconfig.path,
    extraArgs: flags,
    entry: join(dir, "dist", "main.mjs"),
  });
  running.push(s);
  return s;
}

const metrics = async (s: SidecarProcess) => (await get(s.opsPort, "/metrics")).body;

/** Every host's answer: status and App, as the data plane sees them. */
async function answers(s: SidecarProcess): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < APPS; i++) {
    const r = await get(s.dataPort, "/v1/route", { host: `app-${i}.example.com` });
    out.push(`${r.status} ${r.headers["x-mirror-app"] ?? r.headers["x-mirror-reason"]}`);
  }
  return out;
}

async function snapshot(s: SidecarProcess): Promise<{ source: string | null; revision: number }> {
  return JSON.parse((await get(s.opsPort, "/v1/snapshot")).body) as {
    source: string | null;
    revision: number;
  };
}

/**
 * A synced replica whose state file holds its inputs, killed without a chance to write again. It
 * starts cold: a warm start the watches confirm unchanged would not write its file again.
 */
async function syncedThenKilled(): Promise<string[]> {
  await rm(join(dir, "state"), { force: true });
  const first = await start();
  await untilReady(first.opsPort);
  await waitUntil(
    async () =>
      metricValue(await metrics(first), "replica_mirror_snapshot_ready_apps") === APPS &&
      (metricValue(await metrics(first), "replica_mirror_state_writes_total", {
        result: "written",
      }) ?? 0) >= 1
        ? true
        : undefined,
    { timeoutMs: 20_000, what: "every App ready and the state written" },
  );
  const before = await answers(first);
  await first.kill();
  return before;
}

describe("a replica restarted during an API-server outage", () => {
  // How fast a warm start is ready is a figure of `npm run bench` (a quiet machine, the image's
  // flags and cache, 10k Apps); here it must be ready, and route as before, while the API server
  // is still down.
  it("routes every host as before, ready while the API server is down, and converges once it is back with changed data", async () => {
    const before = await syncedThenKilled();
    expect(before.every((a, i) => a === `200 app-${i}`)).toBe(true);
    let down = true;
    const back = envtest.restart({ downMs: 8_000 }).then(() => {
      down = false;
    });
    const second = await start();
    await untilReady(second.opsPort, { intervalMs: 10 });
    expect(await answers(second)).toEqual(before);
    expect(await snapshot(second)).toMatchObject({ source: "state-file" });
    // The certificate came back from the state file, which never held its key in the clear.
    const tls = JSON.parse((await get(second.opsPort, "/v1/apps/app-0")).body) as {
      tls: { state: string; served: { serial: string } | null };
    };
    expect([tls.tls.state, tls.tls.served?.serial]).toEqual([
      "served",
      identityOf(certificate.crt).serial,
    ]);
    const sealed = await readFile(join(dir, "state"));
    for (const line of certificate.key.split("\n").slice(1, 3))
      expect(sealed.includes(Buffer.from(line))).toBe(false);
    expect(down).toBe(true);
    // While it is down, the cluster moves on: a Secret changes and the Registry gains an App
    // (the next tests start from the first world again).
    onTestFinished(() => {
      writeRegistry(envtest, apps);
    });
    writeSecret(envtest, APP_NS, "app-0-credentials", { token: token(0, "rotated") });
    writeRegistry(envtest, [
      ...apps,
      { name: "late", hostnames: ["late.example.com"], namespace: APP_NS },
    ]);
    writeSecret(envtest, APP_NS, "late-credentials", { token: "late" });
    await back;
    await waitUntil(
      async () => {
        const late = await get(second.dataPort, "/v1/route", { host: "late.example.com" });
        const s = await snapshot(second);
        return late.status === 200 && s.source === "api-server" ? true : undefined;
      },
      // The production restart policy: a backoff grown through the outage, then a relist after
      // 410 spread over up to 5 s (ADR 61).
      { timeoutMs: 60_000, what: "the replica to converge on the API server's data" },
    );
    const app0 = JSON.parse((await get(second.opsPort, "/v1/apps/app-0")).body) as {
      secretResourceVersion: string;
    };
    expect(app0.secretResourceVersion).toBe(
      envtest.get(APP_NS, "app-0-credentials")?.metadata.resourceVersion,
    );
  }, 120_000);

  it("lists nothing when it restarts within the API server's watch window", async () => {
    await syncedThenKilled();
    envtest.requests.clear();
    const second = await start();
    await untilReady(second.opsPort);
    await waitUntil(
      async () => ((await snapshot(second)).source === "api-server" ? true : undefined),
      {
        timeoutMs: 10_000,
        what: "the watches confirmed",
      },
    );
    expect(envtest.requests.summary().byVerb.list?.requests ?? 0).toBe(0);
    expect((await answers(second)).every((a, i) => a === `200 app-${i}`)).toBe(true);
  }, 60_000);

  it.each([
    [
      "tampered",
      (b: Buffer) =>
        Buffer.concat([b.subarray(0, 100), Buffer.from([b[100]! ^ 1]), b.subarray(101)]),
      "corrupt",
    ],
    ["truncated", (b: Buffer) => b.subarray(0, b.length - 17), "truncated"],
    ["sealed under another key", null, "foreign-key"],
  ] as const)(
    "starts cold from a %s file, with one log line, and never crashes",
    async (_, damage, kind) => {
      await syncedThenKilled();
      const path = join(dir, "state");
      const bytes = await readFile(path);
      for (let i = 0; i < APPS; i++) expect(bytes.includes(Buffer.from(token(i)))).toBe(false);
      if (damage === null) await writeFile(join(dir, "key"), randomBytes(32));
      else await writeFile(path, damage(bytes));
      const second = await start();
      await untilReady(second.opsPort);
      expect(await snapshot(second)).toMatchObject({ source: "api-server" });
      const refused = second
        .logLines()
        .filter((l) => l.msg === "state file not used: starting cold");
      expect(refused.map((l) => l.reason)).toEqual([kind]);
      expect(
        metricValue(await metrics(second), "replica_mirror_state_loads_total", { outcome: kind }),
      ).toBe(1);
      expect(second.alive()).toBe(true);
    },
    60_000,
  );
});
