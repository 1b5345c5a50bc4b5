// A replica restarted while the Registry's newest value is refused routes as it did before the
// restart (ADR 91): beside a value refused whole, every App of the last good Registry; beside one
// refusing an App, that App's last good version. Through the data listener, as the data plane asks.

import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
