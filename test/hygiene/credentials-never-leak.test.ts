// A credential (ADR 53) leaves the process in one place only: the data listener's 200 for its App,
// as `x-mirror-credential`, to a request no data plane routed. A `serve` process at trace, serving
// credentials, with a state file, goes through Apps with a credential (one served, one whose value
// holds a CR, one rotated, one that breaks the 8 KiB rule) holding recognisable markers; then
// every log line it wrote, every /metrics scrape, every answer of the status and lookup API,
// every refusal and error answer, and the state file's bytes are scanned for each marker, raw and
// as base64. The state file holds them, sealed: it opens with the key and shows them.

import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeState } from "../../src/state/document.ts";
import { parseKey } from "../../src/state/key.ts";
import { unseal } from "../../src/state/seal.ts";
import { get, untilReady } from "../support/http.ts";
import { type SidecarProcess, startSidecarProcess } from "../support/process.ts";
import { waitUntil } from "../support/wait.ts";
import { APP_NS, kubeconfigFor, writeRegistry, writeSecret } from "../support/world.ts";

/** A fresh marker, in the form the issue asks for. */
const marker = (what: string) => `MARKER-a9f3-${what}-${randomBytes(9).toString("hex")}`;
const MARKERS = {
  served: marker("served"),
  rotated: marker("rotated"),
  unusable: marker("unusable"),
  long: marker("long"),
};
const FORBIDDEN = Object.values(MARKERS).flatMap((m) => [m, Buffer.from(m).toString("base64")]);
const leaks = (text: string) => FORBIDDEN.filter((f) => text.includes(f));

const APPS = [
  { name: "vault", hostnames: ["vault.example.com"], credential: { prefix: "Bearer " } },
  { name: "bent", hostnames: ["bent.example.com"], credential: { prefix: "Bearer " } },
  { name: "huge", hostnames: ["huge.example.com"], credential: {} },
  { name: "shop", hostnames: ["shop.example.com"] },
].map((a) => ({ ...a, namespace: APP_NS }));

let envtest: Envtest;
let kubeconfig: { path: string; remove: () => Promise<void> };
let dir: string;
let sidecar: SidecarProcess;
/** Every answer collected, but the data listener's 200s for vault. */
const answers: string[] = [];

async function collect(): Promise<void> {
  const ops = [
    "/v1/apps",
    "/v1/snapshot",
    "/v1/apps/vault",
    "/v1/apps/bent",
    "/v1/apps/huge",
    "/v1/hosts/vault.example.com",
    "/v1/hosts/bent.example.com",
    "/metrics",
    "/nope",
  ];
  for (const p of ops) {
    const a = await get(sidecar.opsPort, p);
    answers.push(`${p} ${a.status} ${JSON.stringify(a.headers)} ${a.body}`);
  }
  // The status API's refusal of a request a data plane routed, and the data listener's.
  const routed = { host: "vault.example.com", "x-mirror-app": "shop" };
  for (const [port, p] of [
    [sidecar.opsPort, "/v1/apps/vault"],
    [sidecar.dataPort, "/v1/route"],
    [sidecar.dataPort, "/nope"],
  ] as const) {
    const a = await get(port, p, routed);
    answers.push(`${p} routed ${a.status} ${JSON.stringify(a.headers)} ${a.body}`);
  }
  for (const host of ["bent.example.com", "huge.example.com", "shop.example.com", "[::1]"]) {
    const a = await get(sidecar.dataPort, "/v1/route", { host });
    answers.push(`/v1/route ${host} ${a.status} ${JSON.stringify(a.headers)} ${a.body}`);
  }
}

/** The data listener's answer for vault: the credential, exactly, once. */
async function vault(): Promise<{ status: number; credential: unknown }> {
  const a = await get(sidecar.dataPort, "/v1/route", { host: "vault.example.com" });
  return { status: a.status, credential: a.headers["x-mirror-credential"] };
}

beforeAll(async () => {
  envtest = await startEnvtest({ bookmarkIntervalMs: 300 });
  kubeconfig = await kubeconfigFor(envtest);
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-credentials-"));
  await writeFile(join(dir, "key"), randomBytes(32));
  writeSecret(envtest, APP_NS, "vault-credentials", { token: `${MARKERS.served}\n` });
  writeSecret(envtest, APP_NS, "bent-credentials", { token: `${MARKERS.unusable}\r\nX: y` });
  writeSecret(envtest, APP_NS, "huge-credentials", { token: MARKERS.long.repeat(300) });
  writeSecret(envtest, APP_NS, "shop-credentials", { token: "s" });
  writeRegistry(envtest, APPS);
  sidecar = await startSidecarProcess({
    kubeconfig: kubeconfig.path,
    logLevel: "trace",
    extraArgs: [
      "--serve-credentials",
      "true",
      "--state-file",
      join(dir, "state"),
      "--state-key-file",
      join(dir, "key"),
    ],
  });
  await untilReady(sidecar.opsPort);
}, 30_000);

afterAll(async () => {
  await sidecar?.stop();
  await envtest?.close();
  await kubeconfig?.remove();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe("a credential, served", () => {
  it("reaches the data listener's 200 for its App, exactly, and nothing else the sidecar says", async () => {
    expect(await vault()).toEqual({ status: 200, credential: `Bearer ${MARKERS.served}` });
    await collect();
    writeSecret(envtest, APP_NS, "vault-credentials", { token: MARKERS.rotated });
    await waitUntil(
      async () => (await vault()).credential === `Bearer ${MARKERS.rotated}` || undefined,
      { timeoutMs: 10_000, what: "the rotated credential" },
    );
    await collect();
    // The state file is written on shutdown, at the latest.
    expect((await sidecar.stop()).code).toBe(0);

    const output = sidecar.output();
    const warnings = sidecar
      .logLines()
      .filter((l) => l.level === 40 && typeof l.app === "string")
      .map(({ app, reason }) => [app, reason]);
    expect(warnings).toEqual([
      ["bent", "value-not-a-header"],
      ["huge", "value-too-long"],
    ]);
    // Enough was written for the scan to mean something: trace logs every status API request.
    expect(output.split("\n").length).toBeGreaterThan(answers.length);
    expect(leaks(output)).toEqual([]);
    expect(leaks(answers.join("\n"))).toEqual([]);
    expect(answers.filter((a) => a.includes("x-mirror-credential"))).toEqual([]);

    const file = await readFile(join(dir, "state"));
    expect(leaks(file.toString("latin1"))).toEqual([]);
    const key = parseKey(await readFile(join(dir, "key")));
    if (!key.ok) throw new Error(key.error.message);
    const opened = unseal(file, key.value);
    if (!opened.ok) throw new Error(opened.error.message);
    const state = decodeState(opened.value);
    if (!state.ok) throw new Error(state.error.message);
    const values = [...state.value.secrets].flatMap((s) => Object.values(s.data));
    expect(values.filter((v) => v.includes("MARKER")).length).toBe(3);
    expect(values).toContain(MARKERS.rotated);
  }, 60_000);
});
