// Generated requests over raw TCP against `replica-mirror serve` running as a child process:
// only the answers http-oracle.ts allows, the process stays up, and its heap stays flat.
// REPLICA_MIRROR_LONG=1 runs 100,000 requests (default 8,000) and 5,000 shrinking runs.

import http from "node:http";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, getJson, metricValue } from "../support/http.ts";
import { type SidecarProcess, startSidecarProcess } from "../support/process.ts";
import { type Exchange, header, RawConnection } from "../support/raw-http.ts";
import { LONG, size, waitUntil } from "../support/wait.ts";
import { kubeconfigFor } from "../support/world.ts";
import { seedWorld, WORLD_APPS } from "../support/world-apps.ts";
import {
  answerLabel,
  describeAnswer,
  type Listener,
  upstreamHeaders,
  violation,
} from "./http-oracle.ts";
import { describeRequest, type FuzzRequest, fuzzRequest, serialise } from "./http-request.ts";

const UPSTREAMS = upstreamHeaders(WORLD_APPS);
const BULK_REQUESTS = size(8_000, 100_000);
const SHRINKING_RUNS = size(400, 5_000);
const HEAP_SAMPLES = 10;
/** Growth of heapUsed (after gc) from the first sample to the last that fails the test. */
const HEAP_BOUND_BYTES = 16 * 1024 * 1024;

let envtest: Envtest;
let kubeconfig: { path: string; remove: () => Promise<void> };
let sidecar: SidecarProcess;

beforeAll(async () => {
  envtest = await startEnvtest();
  seedWorld(envtest);
  kubeconfig = await kubeconfigFor(envtest);
  sidecar = await startSidecarProcess({ kubeconfig: kubeconfig.path });
  await waitUntil(
    async () => {
      const apps = await getJson<{ apps?: { name: string; ready: boolean }[] }>(
        sidecar.opsPort,
        "/v1/apps",
      );
      return apps.apps?.length === WORLD_APPS.length ? true : undefined;
    },
    { timeoutMs: 15_000, what: "the sidecar to serve every App" },
  );
}, 30_000);

afterAll(async () => {
  await sidecar?.stop();
  await envtest?.close();
  await kubeconfig?.remove();
});

async function once(r: FuzzRequest, listener: Listener = "data"): Promise<Exchange> {
  const c = new RawConnection(listener === "data" ? sidecar.dataPort : sidecar.opsPort);
  try {
    return await c.exchange(serialise(r), r.method === "HEAD");
  } finally {
    c.destroy();
  }
}

const plain = (method: string, target: string, headers: [string, string][]): FuzzRequest => ({
  method,
  target,
  version: "HTTP/1.1",
  headers,
  body: "",
  eol: "\r\n",
  wellFormed: true,
  reusable: true,
});
const summary = (e: Exchange) =>
  e.kind === "answer"
    ? {
        status: e.response.status,
        app: header(e.response, "x-mirror-app"),
        reason: header(e.response, "x-mirror-reason"),
        body: e.response.body.length,
      }
    : { status: e.kind };

describe("answers the fuzzer first found wrong", () => {
  // Envoy's HTTP ext_authz forwards the client's method as it is; Fastify routed only the methods
  // it knows and answered the others (PROPFIND, REPORT, PURGE, ...) with 404 {"error":"not-found"}.
  it.each(http.METHODS.filter((m) => m !== "CONNECT"))(
    "routes %s /v1/route like GET",
    async (method) => {
      for (const target of [
        "/v1/route",
        "/v1/route/a/b?c",
        "/v1/route#x",
        "http://shop.example.com/v1/route",
      ]) {
        const e = await once(plain(method, target, [["Host", "shop.example.com"]]));
        expect({ target, ...summary(e) }).toEqual({
          target,
          status: 200,
          app: "shop",
          reason: undefined,
          body: 0,
        });
      }
    },
  );

  // The hot path accepted a 64-character label (404 unknown-host) that the full path refuses
  // (400 bad-host) once the host has an upper-case letter, a trailing dot or a port.
  it("answers a host with a 64-character label the same in any case, with a dot or a port", async () => {
    const host = `${"a".repeat(64)}.example.org`;
    for (const h of [host, host.toUpperCase(), `${host}.`, `${host}:80`]) {
      const e = await once(plain("GET", "/v1/route", [["Host", h]]));
      expect({ h, ...summary(e) }).toEqual({
        h,
        status: 400,
        app: undefined,
        reason: "bad-host",
        body: 0,
      });
    }
  });
});

describe("the data listener under generated requests on raw sockets", () => {
  it("gives every request an answer the contract allows (shrinking on failure)", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (r) => {
        const e = await once(r);
        const v = violation(r, e, UPSTREAMS);
        if (v !== null)
          throw new Error(`${v}\nrequest: ${describeRequest(r)}\nanswer: ${describeAnswer(e)}`);
      }),
      { numRuns: SHRINKING_RUNS },
    );
    expect(sidecar.alive()).toBe(true);
  }, 120_000);

  it("gives every request on the ops listener an answer the contract allows", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (r) => {
        const e = await once(r, "ops");
        const v = violation(r, e, UPSTREAMS, "ops");
        if (v !== null)
          throw new Error(`${v}\nrequest: ${describeRequest(r)}\nanswer: ${describeAnswer(e)}`);
      }),
      { numRuns: SHRINKING_RUNS },
    );
    expect(sidecar.alive()).toBe(true);
  }, 120_000);

  it("answers a host like its upper-case, trailing-dot and :port variants", async () => {
    const labelChars = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-_");
    // Label lengths are drawn uniformly so the 63-character limit is crossed often.
    const label = fc
      .integer({ min: 1, max: 70 })
      .chain((n) => fc.array(labelChars, { minLength: n, maxLength: n }))
      .map((cs) => cs.join(""));
    const host = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join("."));
    const routeAnswer = async (h: string) => {
      const e = await once({
        method: "GET",
        target: "/v1/route",
        version: "HTTP/1.1",
        headers: [["Host", h]],
        body: "",
        eol: "\r\n",
        wellFormed: true,
        reusable: true,
      });
      return answerLabel(e);
    };
    await fc.assert(
      fc.asyncProperty(host, async (h) => {
        const plain = await routeAnswer(h);
        for (const v of [h.toUpperCase(), `${h}.`, `${h}:8080`])
          expect({ host: v, answer: await routeAnswer(v) }).toEqual({ host: v, answer: plain });
      }),
      { numRuns: size(150, 1_000) },
    );
  }, 60_000);

  it(`stays up with a flat heap over ${BULK_REQUESTS} requests on kept-alive connections`, async () => {
    const seed = Number(process.env.REPLICA_MIRROR_FUZZ_SEED ?? Date.now() % 2 ** 31);
    const batch = 500;
    let produced = 0;
    let pending: FuzzRequest[] = [];
    const next = (): FuzzRequest | undefined => {
      if (produced >= BULK_REQUESTS) return undefined;
      if (pending.length === 0)
        pending = fc.sample(fuzzRequest, { numRuns: batch, seed: seed + produced });
      produced++;
      return pending.pop();
    };
    const tally = new Map<string, number>();
    const failures: string[] = [];
    let done = 0;
    let connections = 0;
    const heap: { requests: number; heapUsed: number; rss: number; threadHeap: number }[] = [];
    const sample = async () => {
      const h = await sidecar.heap();
      expect(h.gc).toBe(true);
      // The data thread's heap, as /metrics reports it (no collection forced there).
      const metrics = (await get(sidecar.opsPort, "/metrics")).body;
      const threadHeap = metricValue(metrics, "replica_mirror_data_thread_heap_used_bytes") ?? 0;
      heap.push({ requests: done, heapUsed: h.heapUsed, rss: h.rss, threadHeap });
    };
    // Warm-up: JIT, Fastify's route caches, the first sockets.
    for (let i = 0; i < 300; i++) {
      const r = fc.sample(fuzzRequest, { numRuns: 1, seed: seed - 1 - i })[0]!;
      await once(r);
    }
    await sample();
    const every = Math.ceil(BULK_REQUESTS / HEAP_SAMPLES);
    let nextSample = every;
    let sampling: Promise<void> = Promise.resolve();

    const worker = async () => {
      let c: RawConnection | null = null;
      for (let r = next(); r !== undefined; r = next()) {
        if (c === null || c.ended) {
          c?.destroy();
          c = new RawConnection(sidecar.dataPort);
          connections++;
        }
        const e = await c.exchange(serialise(r), r.method === "HEAD");
        done++;
        const label = answerLabel(e);
        tally.set(label, (tally.get(label) ?? 0) + 1);
        const v = violation(r, e, UPSTREAMS);
        if (v !== null && failures.length < 10)
          failures.push(`${v}\n  request: ${describeRequest(r)}\n  answer: ${describeAnswer(e)}`);
        if (!r.reusable || e.kind !== "answer" || e.closed) {
          c.destroy();
          c = null;
        }
        if (done >= nextSample) {
          nextSample += every;
          sampling = sampling.then(sample);
          await sampling;
        }
      }
      c?.destroy();
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: 8 }, worker));
    const elapsed = (Date.now() - started) / 1000;
    await sampling;
    await sample();

    const mb = (b: number) => Math.round((b / 1024 / 1024) * 100) / 100;
    const figures = {
      seed,
      requests: done,
      connections,
      seconds: elapsed,
      perSecond: Math.round(done / elapsed),
      heapUsedMiB: heap.map((h) => `${h.requests}:${mb(h.heapUsed)}`).join(" "),
      rssMiB: heap.map((h) => mb(h.rss)).join(" "),
      dataThreadHeapMiB: heap.map((h) => mb(h.threadHeap)).join(" "),
      answers: Object.fromEntries([...tally].sort((a, b) => b[1] - a[1])),
    };
    console.log(`http fuzz figures${LONG ? " (long)" : ""}: ${JSON.stringify(figures, null, 1)}`);

    expect(failures).toEqual([]);
    expect(sidecar.alive()).toBe(true);
    expect((await get(sidecar.opsPort, "/healthz")).status).toBe(200);
    expect((await get(sidecar.opsPort, "/readyz")).status).toBe(200);
    const routed = await get(sidecar.dataPort, "/v1/route", { host: "shop.example.com" });
    expect([routed.status, routed.headers["x-mirror-app"]]).toEqual([200, "shop"]);
    const growth = heap[heap.length - 1]!.heapUsed - heap[0]!.heapUsed;
    expect(growth, `heap grew by ${mb(growth)} MiB`).toBeLessThan(HEAP_BOUND_BYTES);
  }, 900_000);
});
