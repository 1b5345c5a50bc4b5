// The Registry check thread (ADR 88) gives exactly what the main thread's check gives, for good
// values, refused entries and refused values alike; a small value is checked inline; a thread
// that cannot start or ends leaves every check, those in flight too, to the main thread, said once.

import { Worker } from "node:worker_threads";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { registryBytes } from "../../bench/fixtures.ts";
import { checkValue } from "../../src/mirror/registry-checker.ts";
import { REGISTRY_RULES } from "../../src/registry/rules.ts";
import { documentBytes, RegistryThread } from "../../src/sidecar/registry-thread.ts";
import { credentialApp, REGISTRY_API_VERSION, registryDoc } from "../support/world.ts";

const under = {
  rules: REGISTRY_RULES,
  defaultNamespace: "platform",
  allowLocalUpstreams: false,
  maxDecompressedBytes: 1024 * 1024,
};
const latin1 = (b: Buffer) => b.toString("latin1");
const json = (doc: unknown) => latin1(Buffer.from(JSON.stringify(doc)));

/** Values covering what the check reads: every App field, refusals of entries and of the whole. */
const VALUES: Record<string, string> = {
  apps: json(
    registryDoc([
      {
        name: "shop",
        hostnames: ["SHOP.example.com.", "*.shop.example.com", "shop.example.com"],
        upstream: "http://shop.tenant-a.svc:8080",
        credential: { prefix: "Bearer " },
        tls: "shop-tls",
      },
      { name: "blog", hostnames: ["blog.example.com"], namespace: "b", key: "t.k_-1" },
      credentialApp("api", "tenant-a"),
      { name: "edge", hostnames: ["edge.example.com"], tls: { namespace: "certs", name: "e" } },
    ]),
  ),
  "refused entries": json(
    registryDoc([
      { name: "ok", hostnames: ["ok.example.com"] },
      { name: "port", hostnames: ["port.example.com:80"] },
      { name: "local", hostnames: ["local.example.com"], upstream: "http://127.0.0.1:80" },
      { name: "ok", hostnames: ["again.example.com"] },
    ]),
  ),
  "an entry without its shape": json({
    apiVersion: REGISTRY_API_VERSION,
    apps: [{ name: "x" }, 7, { name: "y", hostnames: ["y.example.com"], secretRef: {} }],
  }),
  "no Apps": json(registryDoc([])),
  gzip: latin1(gzipSync(JSON.stringify(registryDoc([{ name: "z", hostnames: ["z.example"] }])))),
  "malformed JSON": '{"apps": [nope',
  "wrong envelope": json({ apiVersion: "v2", apps: {} }),
  "over the gzip cap": latin1(gzipSync(Buffer.alloc(2 * 1024 * 1024, 0x20))),
  "corrupt gzip": latin1(Buffer.from([0x1f, 0x8b, 1, 2, 3])),
  "plain over the cap": " ".repeat(1024 * 1024 + 1),
};

const threads: RegistryThread[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.close()));
});

/** A thread that takes every value, and what it logged. */
function thread(
  options: { spawn?: () => Worker; inlineBelow?: number; after?: Promise<unknown> } = {},
) {
  const logged: unknown[] = [];
  const t = new RegistryThread({
    log: { warn: (...args: unknown[]) => logged.push(args) },
    inlineBelow: 0,
    ...options,
  });
  threads.push(t);
  return { t, logged };
}

describe("the Registry check thread", () => {
  it.each(Object.keys(VALUES))("checks %s as the main thread does", async (name) => {
    const value = VALUES[name]!;
    const { t, logged } = thread();
    expect({ check: await t.check(value, under), logged }).toEqual({
      check: checkValue(value, under),
      logged: [],
    });
  });

  it("checks a generated Registry of 100k Apps as the main thread does", async () => {
    const value = latin1(registryBytes(100_000, true));
    const big = { ...under, maxDecompressedBytes: 32 * 1024 * 1024 };
    const { t } = thread();
    const check = await t.check(value, big);
    const inline = checkValue(value, big);
    expect(check.parsed.ok && check.parsed.value.registry.apps.length).toBe(100_000);
    expect(check).toEqual(inline);
  }, 30_000);

  it("answers checks in flight together, each with its own", async () => {
    const { t } = thread();
    const names = Object.keys(VALUES);
    const checks = await Promise.all(names.map((n) => t.check(VALUES[n]!, under)));
    expect(checks).toEqual(names.map((n) => checkValue(VALUES[n]!, under)));
  });

  it("checks a value below its threshold inline, never spawning the thread", async () => {
    let spawned = 0;
    const { t } = thread({
      inlineBelow: 64 * 1024,
      spawn: () => {
        spawned++;
        throw new Error("not to be spawned");
      },
    });
    const value = VALUES.apps!;
    expect({ check: await t.check(value, under), spawned }).toEqual({
      check: checkValue(value, under),
      spawned: 0,
    });
  });

  it("checks inline until the first Snapshot is served, on the thread after", async () => {
    let spawned = 0;
    const first = Promise.withResolvers<void>();
    const { t } = thread({
      after: first.promise,
      spawn: () => {
        spawned++;
        return new Worker(new URL("../../src/sidecar/registry-check-worker.ts", import.meta.url));
      },
    });
    const value = VALUES["refused entries"]!;
    const before = { check: await t.check(value, under), spawned };
    first.resolve();
    await first.promise;
    const after = { check: await t.check(value, under), spawned };
    expect({ before, after }).toEqual({
      before: { check: checkValue(value, under), spawned: 0 },
      after: { check: checkValue(value, under), spawned: 1 },
    });
  });

  it("ends the thread once no check waits, and spawns another for the next", async () => {
    const workers: Worker[] = [];
    const exits: Promise<number>[] = [];
    const { t, logged } = thread({
      spawn: () => {
        const w = new Worker(
          new URL("../../src/sidecar/registry-check-worker.ts", import.meta.url),
        );
        workers.push(w);
        exits.push(new Promise((resolve) => w.once("exit", resolve)));
        return w;
      },
    });
    const names = Object.keys(VALUES).slice(0, 3);
    const together = await Promise.all(names.map((n) => t.check(VALUES[n]!, under)));
    await exits[0];
    const later = await t.check(VALUES.apps!, under);
    await exits[1];
    expect({ together, later, spawned: workers.length, logged }).toEqual({
      together: names.map((n) => checkValue(VALUES[n]!, under)),
      later: checkValue(VALUES.apps!, under),
      spawned: 2,
      logged: [],
    });
  });

  it("estimates a gzip value by its decompressed size", () => {
    const doc = JSON.stringify(registryDoc([{ name: "z", hostnames: ["z.example"] }]));
    expect([documentBytes(VALUES.gzip!), documentBytes(doc)]).toEqual([doc.length, doc.length]);
  });

  it("checks inline once the thread dies, those in flight too, and says so once", async () => {
    let spawned = 0;
    const { t, logged } = thread({
      spawn: () => {
        spawned++;
        // Takes the first value and dies on it.
        return new Worker(
          'require("node:worker_threads").parentPort.on("message", () => process.exit(3));',
          { eval: true },
        );
      },
    });
    const names = Object.keys(VALUES);
    const checks = await Promise.all(names.map((n) => t.check(VALUES[n]!, under)));
    const later = await t.check(VALUES.apps!, under);
    expect({ checks, later, spawned, logged }).toEqual({
      checks: names.map((n) => checkValue(VALUES[n]!, under)),
      later: checkValue(VALUES.apps!, under),
      spawned: 1,
      logged: [
        [
          { err: "exited with code 3" },
          "the Registry check thread failed: values are checked on the main thread",
        ],
      ],
    });
  });

  it("checks inline when the thread cannot start, and says so once", async () => {
    const { t, logged } = thread({
      spawn: () => new Worker(new URL("./no-such-entry.cjs", import.meta.url)),
    });
    const first = await t.check(VALUES.apps!, under);
    const second = await t.check(VALUES["refused entries"]!, under);
    expect({ first, second, logged: logged.length }).toEqual({
      first: checkValue(VALUES.apps!, under),
      second: checkValue(VALUES["refused entries"]!, under),
      logged: 1,
    });
  });
});
