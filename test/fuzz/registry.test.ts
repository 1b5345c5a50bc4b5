// Registry documents: `parseRegistry` never throws on generated values (valid documents, their
// mutations, random JSON, random bytes, each plain, gzip-compressed, truncated or padded); and
// through the mirror on envtest, a refused value keeps the last good Registry served while the
// error shows in /v1/snapshot, in replica_mirror_registry_parse_errors_total and in the log.

import { gzipSync } from "node:zlib";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRegistry } from "../../src/registry/parse.ts";
import { get, getJson, metricValue, untilReady } from "../support/http.ts";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";
import { size, waitUntil } from "../support/wait.ts";
import {
  deleteRegistry,
  REGISTRY_API_VERSION,
  registryDoc,
  writeRegistryData,
  writeRegistryValue,
} from "../support/world.ts";
import { seedWorld, WORLD_APPS } from "../support/world-apps.ts";
import { mutatedDocument, registryValue, validDocument } from "./registry-values.ts";

const OPTS = { defaultNamespace: "platform" };

/** Calls parseRegistry and checks the shape of what it returns; a throw fails the property. */
function parsesToAResult(bytes: Uint8Array, maxDecompressedBytes?: number) {
  const r = parseRegistry(bytes, {
    ...OPTS,
    ...(maxDecompressedBytes === undefined ? {} : { maxDecompressedBytes }),
  });
  if (r.ok) {
    expect(Object.isFrozen(r.value.registry.apps)).toBe(true);
    for (const app of r.value.registry.apps) {
      expect(app.hostnames.length).toBeGreaterThan(0);
      for (const h of app.hostnames) expect(h).toMatch(/^(\*\.)?[a-z0-9.-]+$/);
      if (app.credential !== null) expect(app.credential.prefix).toMatch(/^[\x20-\x7e]{0,64}$/);
    }
  } else {
    expect(r.error.message).toMatch(/^invalid registry: ./);
    expect(r.error.issues.length).toBeGreaterThan(0);
    expect(r.error.issues.length).toBeLessThanOrEqual(20);
  }
  return r;
}

describe("parseRegistry on generated values", () => {
  it("never throws, and always returns a well-formed result", () => {
    fc.assert(
      fc.property(registryValue, (bytes) => {
        parsesToAResult(bytes);
      }),
      { numRuns: size(3_000, 50_000) },
    );
  });

  it("never throws on random bytes, or random bytes behind the gzip magic, under a small cap", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2_000 }), fc.boolean(), (b, magic) => {
        const bytes = magic ? Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), b]) : b;
        parsesToAResult(bytes, 512);
      }),
      { numRuns: size(2_000, 30_000) },
    );
  });

  it("accepts every valid document, the same as JSON and as gzip", () => {
    fc.assert(
      fc.property(validDocument, (doc) => {
        const text = Buffer.from(JSON.stringify(doc));
        const plain = parsesToAResult(text);
        expect(plain.ok).toBe(true);
        expect(parsesToAResult(gzipSync(text))).toEqual(plain);
      }),
      { numRuns: size(500, 10_000) },
    );
  });

  it("is deterministic on mutated documents, gzip or not", () => {
    fc.assert(
      fc.property(mutatedDocument, (doc) => {
        const text = Buffer.from(JSON.stringify(doc) ?? "null");
        const once = parsesToAResult(text);
        expect(parsesToAResult(text)).toEqual(once);
        expect(parsesToAResult(gzipSync(text))).toEqual(once);
      }),
      { numRuns: size(1_000, 20_000) },
    );
  });

  it("refuses a gzip bomb over the cap as malformed", () => {
    const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
    const r = parsesToAResult(bomb, 1024 * 1024);
    expect(r.ok).toBe(false);
  });
});

// --- through the mirror ----------------------------------------------------------------------

type Command =
  | { readonly kind: "value"; readonly bytes: Buffer }
  | { readonly kind: "good"; readonly apps: number; readonly gzip: boolean }
  | { readonly kind: "missing-key" }
  | { readonly kind: "delete" };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: registryValue.map((bytes) => ({ kind: "value" as const, bytes })) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("good" as const),
      apps: fc.integer({ min: 1, max: WORLD_APPS.length }),
      gzip: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "missing-key" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "delete" as const }) },
);

interface SnapshotView {
  revision: number;
  registry: { present: boolean; resourceVersion: string | null; error: string | null };
}

let envtest: Envtest;
let running: TestSidecar;
const data = () => running.data.port;
const ops = () => running.ops.port;

beforeAll(async () => {
  envtest = await startEnvtest();
  seedWorld(envtest);
  running = await startTestSidecar(envtest, {
    logLevel: "debug",
    watchTimeoutSeconds: 5,
    reflector: "production",
  });
  await untilReady(ops());
});

afterAll(async () => {
  await running?.stop();
  await envtest?.close();
});

const parseErrors = async () =>
  metricValue((await get(ops(), "/metrics")).body, "replica_mirror_registry_parse_errors_total") ??
  Number.NaN;
const refusedLogLines = () =>
  running
    .lines()
    .map((l) => JSON.parse(l) as { msg?: string; err?: string })
    .filter((l) => l.msg?.startsWith("Registry refused"));

describe("the mirror under generated Registry values", () => {
  // MirrorObserver.registryRejected promises "once per distinct value": two different refused
  // values whose messages happen to be equal are two refusals (found by the property below).
  it("counts and logs each refused value, also when its error repeats the previous one", async () => {
    const world = writeRegistryValue(envtest, JSON.stringify(registryDoc(WORLD_APPS)));
    await waitUntil(
      async () =>
        (await getJson<SnapshotView>(ops(), "/v1/snapshot")).registry.resourceVersion === world
          ? true
          : undefined,
      { timeoutMs: 10_000, what: "the world Registry" },
    );
    const before = { metric: await parseErrors(), lines: refusedLogLines().length };
    const errors: (string | null)[] = [];
    for (const value of [
      JSON.stringify({ apiVersion: REGISTRY_API_VERSION }),
      JSON.stringify({ apiVersion: REGISTRY_API_VERSION, x: 1 }),
    ]) {
      const rv = writeRegistryValue(envtest, value);
      const s = await waitUntil(
        async () => {
          const v = await getJson<SnapshotView>(ops(), "/v1/snapshot");
          return v.registry.resourceVersion === rv ? v : undefined;
        },
        { timeoutMs: 10_000, what: `the refused value at ${rv}` },
      );
      errors.push(s.registry.error);
    }
    expect(errors[0]).toMatch(/^invalid registry: apps: /);
    expect(errors[1]).toBe(errors[0]);
    expect({ metric: await parseErrors(), lines: refusedLogLines().length }).toEqual({
      metric: before.metric + 2,
      lines: before.lines + 2,
    });
  });

  it("keeps the last good Registry, and reports every refusal in /v1/snapshot, the metric and the log", async () => {
    let writes = 0;
    let refusals = 0;
    const at = { metric: await parseErrors(), lines: refusedLogLines().length };
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 6 }), async (commands) => {
        // Every run starts from the whole world as the last good Registry.
        const start = writeRegistryValue(envtest, JSON.stringify(registryDoc(WORLD_APPS)));
        await waitUntil(
          async () => {
            const s = await getJson<SnapshotView>(ops(), "/v1/snapshot");
            return s.registry.resourceVersion === start && s.registry.error === null
              ? true
              : undefined;
          },
          { timeoutMs: 10_000, what: "the world Registry" },
        );
        let good: string[] = WORLD_APPS.map((a) => a.name).sort();
        let previousRv: string | null = start;
        let error: string | null = null;
        for (const c of commands) {
          const before = await parseErrors();
          let rv: string | null;
          let refused: boolean;
          switch (c.kind) {
            case "value": {
              // The rules of the sidecar's flags: local upstreams allowed (serve-flags.ts).
              const parsed = parseRegistry(c.bytes, { ...OPTS, allowLocalUpstreams: true });
              refused = !parsed.ok;
              if (parsed.ok) good = parsed.value.registry.apps.map((a) => a.name).sort();
              rv = writeRegistryValue(envtest, c.bytes);
              break;
            }
            case "good": {
              const apps = WORLD_APPS.slice(0, c.apps);
              const json = JSON.stringify(registryDoc(apps));
              rv = writeRegistryValue(envtest, c.gzip ? gzipSync(json) : json);
              good = apps.map((a) => a.name).sort();
              refused = false;
              break;
            }
            case "missing-key":
              rv = writeRegistryData(envtest, { other: "x" });
              refused = true;
              break;
            case "delete":
              deleteRegistry(envtest);
              rv = null;
              good = [];
              refused = false;
              break;
          }
          writes++;
          const s = await waitUntil(
            async () => {
              const v = await getJson<SnapshotView>(ops(), "/v1/snapshot");
              return v.registry.resourceVersion === rv && v.registry.present === (rv !== null)
                ? v
                : undefined;
            },
            { timeoutMs: 10_000, what: `the Registry at ${rv} (${c.kind})` },
          );
          const apps = await getJson<{ apps: { name: string }[] }>(ops(), "/v1/apps");
          expect({ command: c.kind, apps: apps.apps.map((a) => a.name).sort() }).toEqual({
            command: c.kind,
            apps: good,
          });
          if (refused) {
            expect(s.registry.error).toMatch(/^invalid registry: ./);
            refusals++;
          } else {
            expect(s.registry.error).toBeNull();
          }
          // A refused value is counted (and logged) once; a write that changed nothing, or a
          // good value, is not. A new refused value whose error reads like the previous one's
          // must count too (the test above pins that case), so it is not asserted here.
          const counted = (await parseErrors()) - before;
          const fresh = rv !== previousRv;
          const repeatsError = s.registry.error !== null && s.registry.error === error;
          if (!(refused && fresh && repeatsError))
            expect({ command: c.kind, counted }).toEqual({
              command: c.kind,
              counted: refused && fresh ? 1 : 0,
            });
          previousRv = rv;
          error = s.registry.error;
          if (good.includes("shop")) {
            const r = await get(data(), "/v1/route", { host: "shop.example.com" });
            expect([r.status, r.headers["x-mirror-app"]]).toEqual([200, "shop"]);
          }
        }
      }),
      { numRuns: size(6, 80) },
    );
    // One refusal whatever was generated (six runs may hold none), so the counts are never vacuous.
    const last = writeRegistryData(envtest, { other: "the last write" });
    refusals++;
    await waitUntil(
      async () => {
        const v = await getJson<SnapshotView>(ops(), "/v1/snapshot");
        return v.registry.resourceVersion === last ? v : undefined;
      },
      { timeoutMs: 10_000, what: `the Registry at ${last} (missing-key)` },
    );
    const total = (await parseErrors()) - at.metric;
    expect(refusedLogLines().length - at.lines).toBe(total);
    expect(total).toBeLessThanOrEqual(refusals);
    expect(total).toBeGreaterThan(0);
    console.log(
      `registry through the mirror: ${writes} writes, ${refusals} refused values, ${total} counted`,
    );
  }, 120_000);
});
