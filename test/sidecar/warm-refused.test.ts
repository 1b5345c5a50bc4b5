// A replica restarted beside a refusal serves as it did before the restart: beside a Registry
// value refused whole, every App of the last good Registry; beside one refusing an App, that App's
// last good version (ADR 91); beside a refused certificate, the App's last good one (ADR 92).
// Routes through the data listener, as the data plane asks; certificates as `/v1/apps` shows them.

import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { get, getJson } from "../support/http.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { waitUntil } from "../support/wait.ts";
import {
  APP_NS,
  type AppInput,
  writeRegistry,
  writeRegistryValue,
  writeSecret,
} from "../support/world.ts";

const SHOP: AppInput = {
  name: "shop",
  hostnames: ["shop.example.com"],
  namespace: APP_NS,
  upstream: "http://shop.tenant-a.svc:8080",
};
const BLOG: AppInput = {
  name: "blog",
  hostnames: ["blog.example.com"],
  namespace: APP_NS,
  upstream: "http://blog.tenant-a.svc:8080",
};
const HOSTS = ["shop.example.com", "blog.example.com"];

let envtest: Envtest;
let dir: string;
let flags: string[];

beforeAll(async () => {
  envtest = await startEnvtest({ bookmarkIntervalMs: 200 });
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-warm-refused-"));
  await writeFile(join(dir, "key"), randomBytes(32));
  flags = [
    "--state-file",
    join(dir, "state"),
    "--state-key-file",
    join(dir, "key"),
    "--allow-local-upstreams",
    "false",
    "--serve-certificates",
    "true",
  ];
  for (const app of [SHOP, BLOG])
    writeSecret(envtest, APP_NS, `${app.name}-credentials`, { token: "t" });
}, 60_000);

afterAll(async () => {
  await envtest?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Each host's answer: status, then the App and upstream, or the reason. */
async function answers(s: TestSidecar): Promise<string[]> {
  const out: string[] = [];
  for (const host of HOSTS) {
    const r = await get(s.data.port, "/v1/route", { host });
    const h = r.headers;
    out.push(
      `${r.status} ${h["x-mirror-app"] ?? h["x-mirror-reason"]} ${h["x-mirror-upstream"] ?? "-"}`,
    );
  }
  return out;
}

type SnapshotBody = { source: string; registry: { resourceVersion: string; error: string | null } };

const snapshotOf = (s: TestSidecar) => getJson<SnapshotBody>(s.ops.port, "/v1/snapshot");

/**
 * A replica that served SHOP and BLOG, then the value `refuse` writes, stopped and started again:
 * what it answered before the stop, and what it answers from its state file after the start.
 */
async function restartedBeside(refuse: () => string) {
  await rm(join(dir, "state"), { force: true });
  writeRegistry(envtest, [SHOP, BLOG]);
  const first = await startTestSidecar(envtest, { flags });
  let before: string[];
  try {
    await waitUntil(async () => ((await answers(first))[1]!.startsWith("200") ? true : undefined), {
      timeoutMs: 10_000,
      what: "blog routed",
    });
    const rv = refuse();
    await waitUntil(
      async () => ((await snapshotOf(first)).registry.resourceVersion === rv ? true : undefined),
      { timeoutMs: 10_000, what: "the refused value served" },
    );
    before = await answers(first);
  } finally {
    await first.stop();
  }
  const second = await startTestSidecar(envtest, { flags });
  try {
    await second.serving(1);
    const { registry } = await snapshotOf(second);
    return { before, after: await answers(second), refused: registry.error !== null };
  } finally {
    await second.stop();
  }
}

describe("a replica restarted beside a refused Registry value", () => {
  it("routes every App of the last good Registry beside a value refused whole", async () => {
    const { before, after, refused } = await restartedBeside(() =>
      writeRegistryValue(envtest, "{not json"),
    );
    expect({ before, after, refused }).toEqual({
      before: ["200 shop http://shop.tenant-a.svc:8080", "200 blog http://blog.tenant-a.svc:8080"],
      after: before,
      refused: true,
    });
  });

  it("routes a refused App to its last good upstream beside a value refusing it", async () => {
    const { before, after, refused } = await restartedBeside(() =>
      writeRegistry(envtest, [
        { ...SHOP, upstream: "http://shop-v2.tenant-a.svc:8080" },
        { ...BLOG, upstream: "http://127.0.0.1:9000" },
      ]),
    );
    expect({ before, after, refused }).toEqual({
      before: [
        "200 shop http://shop-v2.tenant-a.svc:8080",
        "200 blog http://blog.tenant-a.svc:8080",
      ],
      after: before,
      refused: false,
    });
  });
});

describe("a replica restarted beside a refused certificate", () => {
  const shop = { ...SHOP, tls: "shop-tls" };
  type Tls = { state: string; rule: string | null; served: { serial: string } | null };
  const tlsOf = async (s: TestSidecar) =>
    (await getJson<{ tls: Tls }>(s.ops.port, "/v1/apps/shop")).tls;

  /** Serves `good`, then the TLS Secret holds `bad`; restarted with its state file or without. */
  async function restarted(good: TestCertificate, bad: Record<string, string>, warm: boolean) {
    await rm(join(dir, "state"), { force: true });
    writeSecret(envtest, APP_NS, "shop-tls", tlsSecretData(good));
    writeRegistry(envtest, [shop, BLOG]);
    const first = await startTestSidecar(envtest, { flags });
    let before: Tls;
    try {
      await waitUntil(async () => ((await tlsOf(first)).state === "served" ? true : undefined), {
        timeoutMs: 10_000,
        what: "the certificate served",
      });
      writeSecret(envtest, APP_NS, "shop-tls", bad);
      before = await waitUntil(
        async () => {
          const tls = await tlsOf(first);
          return tls.state === "refused" ? tls : undefined;
        },
        { timeoutMs: 10_000, what: "the certificate refused" },
      );
    } finally {
      await first.stop();
    }
    if (!warm) await rm(join(dir, "state"), { force: true });
    const second = await startTestSidecar(envtest, { flags });
    try {
      await second.serving(1);
      return { before, after: await tlsOf(second) };
    } finally {
      await second.stop();
    }
  }

  it("serves the App's last good certificate on, where a cold start has none to serve", async () => {
    const good = makeCertificate({ names: ["shop.example.com"] });
    const other = makeCertificate({ names: ["shop.example.com"] });
    // The other certificate's key: `key-mismatch`.
    const bad = { "tls.crt": good.crt, "tls.key": other.key };
    const warm = await restarted(good, bad, true);
    const cold = await restarted(good, bad, false);
    const kept = (t: Tls) => [t.state, t.rule, t.served?.serial ?? null];
    const serial = warm.before.served?.serial ?? "none";
    expect({
      warm: [kept(warm.before), warm.after],
      cold: [kept(cold.before), cold.after],
    }).toEqual({
      warm: [["refused", "tls.key is not the key of the certificate", serial], warm.before],
      cold: [
        ["refused", "tls.key is not the key of the certificate", serial],
        { ...cold.before, served: null },
      ],
    });
  });
});
