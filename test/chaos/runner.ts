/**
 * One chaos run: an envtest, three sidecars, a seed's operations applied in order while every
 * sidecar is sampled continuously; at each quiescent point every sidecar must converge on the
 * model. The first violation ends the run.
 */
import { Agent, type IncomingHttpHeaders, type OutgoingHttpHeaders, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { type Random, seeded } from "../support/random.ts";
import {
  type Expected,
  expectedAtQuiescence,
  judgeApps,
  judgeRoute,
  judgeSnapshotRegistry,
  type Viewer,
} from "./check.ts";
import {
  type AppRecord,
  answerKey,
  History,
  type Probe,
  REGISTRY_NAME,
  REGISTRY_NAMESPACE,
  type RouteAnswer,
  routeAnswer,
} from "./model.ts";
import { describeOp, type Op } from "./ops.ts";
import { PROBES, spelling } from "./probes.ts";
import { badRegistryData, goodRegistryData } from "./registry-doc.ts";
import { type ChaosSidecar, type SidecarSpec, startChaosSidecar } from "./sidecar.ts";

/** Three replicas: cluster-wide with two watch timeouts, and one watching three namespaces only. */
export const SIDECARS: readonly SidecarSpec[] = [
  { name: "a", flags: ["--watch-timeout", "1"], backoff: { initialMs: 50, capMs: 1000 } },
  { name: "b", flags: ["--watch-timeout", "2"], backoff: { initialMs: 100, capMs: 2000 } },
  {
    name: "c",
    flags: ["--watch-timeout", "1", "--secret-namespaces", "tenant-a,tenant-b,platform"],
    backoff: { initialMs: 50, capMs: 1000 },
  },
];

export interface RunOptions {
  /** How long sidecars get to converge at a quiescent point. */
  readonly quiesceDeadlineMs: number;
  readonly bookmarkIntervalMs: number;
}

export const DEFAULT_RUN_OPTIONS: RunOptions = {
  quiesceDeadlineMs: 15_000,
  bookmarkIntervalMs: 250,
};

export interface RunStats {
  samples: number;
  /** Answers no single cluster state explains, allowed because the watches lag each other. */
  skew: number;
  /** 503s for a newly referenced Secret whose fetch failed. */
  unfetched: number;
  quiescentPoints: number;
  /** The longest convergence at a quiescent point. */
  maxConvergeMs: number;
  /** What the sidecars reported: restarts, relists and fetch failures by reason. */
  events: Record<string, number>;
}

export interface RunResult {
  readonly ok: boolean;
  /** Operations applied when the failure was seen: the prefix `ops.slice(0, opsApplied)` shows it. */
  readonly opsApplied: number;
  readonly failure?: string;
  readonly stats: RunStats;
  readonly ms: number;
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The contract's parts of a `/v1/route` answer; anything off-contract keeps its details. */
function routeAnswerOf(a: Answer): RouteAnswer {
  const reason = header(a.headers, "x-mirror-reason");
  const app = header(a.headers, "x-mirror-app");
  const revision = header(a.headers, "x-mirror-revision");
  const retryAfter = header(a.headers, "retry-after");
  if (a.status === 200 && app !== undefined && revision !== undefined && a.body === "")
    return { status: 200, app, upstream: header(a.headers, "x-mirror-upstream") ?? null };
  if (a.status === 503 && reason === "secret-unavailable" && app !== undefined && retryAfter)
    return { status: 503, reason, app };
  if (a.status === 404 && reason === "unknown-host") return { status: 404 };
  if (a.status === 400 && reason === "bad-host") return { status: 400 };
  return { status: a.status, other: `${reason ?? "-"} ${app ?? "-"} ${a.body.slice(0, 80)}` };
}

class Violation extends Error {}

/** CHAOS_VERBOSE=1 prints every answer allowed only as skew. */
const VERBOSE = process.env.CHAOS_VERBOSE === "1";

/** After the last quiescent point, sampling goes on this long: a converged world must stay. */
const SETTLE_MS = 300;

/** Applies `ops` after `initial`; returns at the first violation or after the final quiescent point. */
export async function runOps(
  seed: number,
  initial: readonly Op[],
  ops: readonly Op[],
  options: RunOptions = DEFAULT_RUN_OPTIONS,
): Promise<RunResult> {
  const run = new Run(seed, options);
  const started = Date.now();
  let applied = 0;
  try {
    await run.start(initial);
    for (const op of ops) {
      applied += 1;
      await run.apply(op);
      run.throwIfFailed();
    }
    await run.apply({ op: "quiesce" });
    await sleep(SETTLE_MS);
    run.throwIfFailed();
    return { ok: true, opsApplied: applied, stats: run.stats(), ms: Date.now() - started };
  } catch (e) {
    const failure = e instanceof Violation ? e.message : `error: ${(e as Error).stack ?? e}`;
    return {
      ok: false,
      opsApplied: applied,
      failure: run.firstFailure ?? failure,
      stats: run.stats(),
      ms: Date.now() - started,
    };
  } finally {
    await run.close();
  }
}

class Run {
  readonly #options: RunOptions;
  readonly #random: Random;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 4 });
  #envtest: Envtest | undefined;
  #history: History | undefined;
  #sidecars: ChaosSidecar[] = [];
  #windowStart = 0;
  #sampling = false;
  #samplers: Promise<void>[] = [];
  /** Per sidecar: the highest revision and Registry resourceVersion received so far. */
  readonly #floors = new Map<string, { revision: number; registryRv: number }>();
  /**
   * Per sidecar: the Registry it converged on when a relist made it skip the last good value
   * (allowed, see expectedAtQuiescence); it serves that one until a good value is written again.
   */
  readonly #skipped = new Map<string, { lastGoodIndex: number; served: Expected["served"] }>();
  /** Per sidecar: the earliest state its latest `/v1/apps` parts fit (see #sampleApps). */
  readonly #appsFloors = new Map<string, { registry: number; secrets: Map<string, number> }>();
  readonly #stats: RunStats = {
    samples: 0,
    skew: 0,
    unfetched: 0,
    quiescentPoints: 0,
    maxConvergeMs: 0,
    events: {},
  };
  firstFailure: string | undefined;
  #lastOp = "start";

  constructor(seed: number, options: RunOptions) {
    this.#options = options;
    this.#random = seeded(seed ^ 0x5eed);
  }

  get #h(): History {
    if (this.#history === undefined) throw new Error("not started");
    return this.#history;
  }

  get #api(): Envtest {
    if (this.#envtest === undefined) throw new Error("API server down");
    return this.#envtest;
  }

  async start(initial: readonly Op[]): Promise<void> {
    this.#envtest = await startEnvtest({ bookmarkIntervalMs: this.#options.bookmarkIntervalMs });
    this.#history = new History({ registry: { kind: "absent" }, registryRv: null });
    for (const op of initial) await this.#write(op);
    this.#sidecars = await Promise.all(
      SIDECARS.map((spec) => startChaosSidecar(spec, this.#api, () => this.#h.latestIndex)),
    );
    for (const s of this.#sidecars) {
      this.#floors.set(s.name, { revision: 0, registryRv: 0 });
      this.#appsFloors.set(s.name, { registry: 0, secrets: new Map() });
    }
    await this.#quiesce();
    this.#sampling = true;
    this.#samplers = this.#sidecars.map((s) => this.#sample(s));
  }

  throwIfFailed(): void {
    if (this.firstFailure !== undefined) throw new Violation(this.firstFailure);
  }

  #fail(message: string): void {
    this.firstFailure ??= `${message}\n  (during: ${this.#lastOp})`;
  }

  async apply(op: Op): Promise<void> {
    this.#lastOp = describeOp(op);
    const faults = () => this.#api.faults;
    switch (op.op) {
      case "registry":
      case "registry-bad":
      case "registry-delete":
      case "secret":
      case "secret-delete":
        await this.#write(op);
        break;
      case "drop-watches":
        faults().dropWatches();
        break;
      case "end-watches":
        faults().endWatches();
        break;
      case "stall":
        faults().stall(op.on);
        break;
      case "compact":
        faults().compact();
        break;
      case "fail":
        faults().failNext({
          verb: op.verb,
          count: op.count,
          status: op.status,
          ...(op.retryAfterSeconds === undefined
            ? {}
            : { retryAfterSeconds: op.retryAfterSeconds }),
        });
        break;
      case "chunking":
        faults().chunking({ mode: op.mode, seed: op.seed });
        break;
      case "garbage":
        faults().injectGarbage(op.kind);
        break;
      case "latency":
        faults().setLatency(op.ms);
        break;
      case "restart":
        await this.#restart(op.downMs);
        break;
      case "wait":
        await sleep(op.ms);
        break;
      case "quiesce":
        await this.#quiesce();
        break;
    }
    await new Promise((r) => setImmediate(r));
  }

  async #write(op: Op): Promise<void> {
    const api = this.#api;
    const h = this.#h;
    const registry = { namespace: REGISTRY_NAMESPACE, name: REGISTRY_NAME };
    switch (op.op) {
      case "registry": {
        const obj = api.apply({ ...registry, data: goodRegistryData(op.apps, op.gzip) });
        h.setRegistry({ kind: "good", apps: op.apps }, obj.metadata.resourceVersion ?? null);
        return;
      }
      case "registry-bad": {
        const obj = api.apply({ ...registry, data: badRegistryData(op.variant, op.apps) });
        h.setRegistry({ kind: "bad", variant: op.variant }, obj.metadata.resourceVersion ?? null);
        return;
      }
      case "registry-delete":
        if (api.delete(registry.namespace, registry.name)) h.setRegistry({ kind: "absent" }, null);
        return;
      case "secret": {
        const obj = api.apply({ namespace: op.namespace, name: op.name, data: op.data });
        h.setSecret(op.namespace, op.name, {
          data: op.data,
          rv: obj.metadata.resourceVersion ?? "",
        });
        return;
      }
      case "secret-delete":
        if (api.delete(op.namespace, op.name)) h.setSecret(op.namespace, op.name, undefined);
        return;
      default:
        throw new Error(`not a write: ${op.op}`);
    }
  }

  async #restart(downMs: number): Promise<void> {
    const { port, state } = this.#api;
    const old = this.#api;
    this.#envtest = undefined;
    await old.close();
    await sleep(downMs);
    for (let attempt = 0; ; attempt++) {
      try {
        this.#envtest = await startEnvtest({
          port,
          state,
          bookmarkIntervalMs: this.#options.bookmarkIntervalMs,
        });
        return;
      } catch (e) {
        if (attempt >= 20) throw e;
        await sleep(100);
      }
    }
  }

  #viewer(s: ChaosSidecar, windowStart: number): Viewer {
    const skipped = this.#skipped.get(s.name);
    return {
      visible: (ns) => s.visible(ns),
      fetchFailed: s.events.fetchFailures.some((at) => at >= windowStart),
      served: (state) =>
        skipped !== undefined && state.lastGoodIndex === skipped.lastGoodIndex
          ? skipped.served
          : state.served,
    };
  }

  /** GETs path from a sidecar, enforcing that revisions and Registry versions never go back. */
  async #get(s: ChaosSidecar, path: string, headers: OutgoingHttpHeaders = {}): Promise<Answer> {
    const floor = { ...this.#floors.get(s.name)! };
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = request(
        `${s.url}${path}`,
        { agent: this.#agent, headers, timeout: 3_000 },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            body += c;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${path}: no answer within 3 s`)));
      req.on("error", reject);
      req.end();
    });
    const revision = revisionOf(answer);
    const registryRv = registryRvOf(answer);
    const now = this.#floors.get(s.name)!;
    if (revision !== undefined) {
      if (revision < floor.revision)
        this.#fail(
          `sidecar ${s.name}: revision went back from ${floor.revision} to ${revision} (${path})`,
        );
      now.revision = Math.max(now.revision, revision);
    }
    if (registryRv !== undefined) {
      if (registryRv < floor.registryRv)
        this.#fail(
          `sidecar ${s.name}: Registry resourceVersion went back from ${floor.registryRv} to ${registryRv}`,
        );
      now.registryRv = Math.max(now.registryRv, registryRv);
    }
    return answer;
  }

  /** Samples one sidecar until the run ends, checking each answer against the window. */
  async #sample(s: ChaosSidecar): Promise<void> {
    const r = this.#random;
    while (this.#sampling) {
      const windowStart = this.#windowStart;
      try {
        const kind = r.int(10);
        if (kind < 2) await this.#sampleApps(s, windowStart);
        else if (kind === 2) await this.#sampleSnapshot(s, windowStart);
        else await this.#sampleRoute(s, r.pick(PROBES), windowStart);
      } catch (e) {
        this.#fail(`sidecar ${s.name} did not answer: ${(e as Error).message}`);
      }
      this.#stats.samples += 1;
      await sleep(r.between(2, 12));
    }
  }

  async #sampleRoute(s: ChaosSidecar, probe: Probe, windowStart: number): Promise<void> {
    const headers = spelling(this.#random, probe);
    const answer = await this.#get(s, "/v1/route", headers);
    const actual = answerKey(routeAnswerOf(answer));
    const window = this.#h.states.slice(windowStart);
    const judged = judgeRoute(window, probe, actual, this.#viewer(s, windowStart));
    this.#count(judged.verdict);
    if (judged.verdict === "skew" && VERBOSE)
      console.log(
        `skew: sidecar ${s.name} ${probe.raw} "${actual}"; single states allow ${JSON.stringify(judgeRoute(window.slice(-1), probe, "", this.#viewer(s, windowStart)).allowed)} (latest)`,
      );
    if (judged.verdict === "violation") {
      this.#fail(
        `sidecar ${s.name}: ${JSON.stringify(headers)} answered "${actual}" (revision ${revisionOf(answer) ?? "-"}); ` +
          `allowed since the last quiescent point: ${judged.allowed.map((a) => `"${a}"`).join(", ")}`,
      );
    }
  }

  /**
   * `/v1/apps` is whole (one Registry, each Secret at some state of the window) and moves only
   * forward: each part must fit a state at or after the earliest state an earlier answer allowed.
   */
  async #sampleApps(s: ChaosSidecar, windowStart: number): Promise<void> {
    const floors = this.#appsFloors.get(s.name)!;
    const before = { registry: floors.registry, secrets: new Map(floors.secrets) };
    const answer = await this.#get(s, "/v1/apps");
    if (answer.status !== 200) return this.#fail(`sidecar ${s.name}: /v1/apps ${answer.status}`);
    const body = JSON.parse(answer.body) as { apps: AppRecord[] };
    const judged = judgeApps(
      this.#h.states.slice(windowStart),
      windowStart,
      body.apps,
      this.#viewer(s, windowStart),
    );
    this.#count(judged.verdict);
    if (judged.verdict === "violation")
      return this.#fail(`sidecar ${s.name}: /v1/apps ${judged.detail}: ${answer.body}`);
    if (judged.verdict === "skew" && VERBOSE)
      console.log(
        `skew: sidecar ${s.name} /v1/apps: Registry fits ${judged.registryAt.join(",")}; ${[...judged.secretAt].map(([k, v]) => `${k} fits ${v.join(",")}`).join("; ")}`,
      );
    const back = (what: string, at: readonly number[], floor: number | undefined) =>
      floor !== undefined &&
      at.length > 0 &&
      Math.max(...at) < floor &&
      this.#fail(
        `sidecar ${s.name}: /v1/apps went back: ${what} fits states ${at.join(",")} only, ` +
          `an earlier answer fitted state ${floor} or later: ${answer.body}`,
      );
    back("the Registry", judged.registryAt, before.registry);
    if (judged.registryAt.length > 0)
      floors.registry = Math.max(floors.registry, Math.min(...judged.registryAt));
    for (const [secret, at] of judged.secretAt) {
      back(`Secret ${secret}`, at, before.secrets.get(secret));
      floors.secrets.set(secret, Math.max(floors.secrets.get(secret) ?? 0, Math.min(...at)));
    }
  }

  async #sampleSnapshot(s: ChaosSidecar, windowStart: number): Promise<void> {
    const answer = await this.#get(s, "/v1/snapshot");
    const body = JSON.parse(answer.body) as SnapshotBody;
    if (answer.status !== 200 || !body.synced || body.registry === null)
      return this.#fail(`sidecar ${s.name}: /v1/snapshot ${answer.status} ${answer.body}`);
    const problem = judgeSnapshotRegistry(this.#h.states.slice(windowStart), body.registry);
    if (problem !== null) this.#fail(`sidecar ${s.name}: ${problem}`);
  }

  #count(verdict: string): void {
    if (verdict === "skew") this.#stats.skew += 1;
    if (verdict === "unfetched") this.#stats.unfetched += 1;
  }

  /** Faults off; polls every sidecar until its whole world equals the model, or fails. */
  async #quiesce(): Promise<void> {
    this.#api.faults.reset();
    const started = Date.now();
    const deadline = started + this.#options.quiesceDeadlineMs;
    const pending = new Set(this.#sidecars);
    const last = new Map<string, string>();
    while (pending.size > 0) {
      const window = this.#h.states.slice(this.#windowStart);
      for (const s of [...pending]) {
        const viewer = {
          ...this.#viewer(s, this.#windowStart),
          registryRelists: s.events.registryRelists,
        };
        const worlds = expectedAtQuiescence(window, viewer);
        const found = await this.#match(s, worlds);
        if (typeof found === "string") {
          last.set(s.name, found);
          continue;
        }
        pending.delete(s);
        const latest = window[window.length - 1]!;
        if (JSON.stringify(found.served) === JSON.stringify(latest.served))
          this.#skipped.delete(s.name);
        else
          this.#skipped.set(s.name, { lastGoodIndex: latest.lastGoodIndex, served: found.served });
      }
      if (pending.size === 0) break;
      if (Date.now() > deadline) {
        const names = [...pending].map((s) => s.name);
        throw new Violation(
          `sidecars ${names.join(", ")} did not converge within ${this.#options.quiesceDeadlineMs} ms: ` +
            names.map((n) => `\n  ${n}: ${last.get(n)}`).join(""),
        );
      }
      await sleep(50);
    }
    this.#stats.quiescentPoints += 1;
    this.#stats.maxConvergeMs = Math.max(this.#stats.maxConvergeMs, Date.now() - started);
    this.#windowStart = this.#h.latestIndex;
  }

  /** The world a sidecar shows, or how it differs from the first (the expected) one. */
  async #match(s: ChaosSidecar, worlds: readonly Expected[]): Promise<Expected | string> {
    const snap = await this.#get(s, "/v1/snapshot");
    const appsAnswer = await this.#get(s, "/v1/apps");
    if (snap.status !== 200 || appsAnswer.status !== 200)
      return `/v1/snapshot ${snap.status}, /v1/apps ${appsAnswer.status}`;
    const body = JSON.parse(snap.body) as SnapshotBody;
    const summary = {
      apps: body.apps,
      readyApps: body.readyApps,
      hostnames: body.hostnames,
      registry: {
        present: body.registry?.present,
        resourceVersion: body.registry?.resourceVersion,
        rejected: body.registry?.error !== null,
      },
      conflicts: body.conflicts,
    };
    const apps = (JSON.parse(appsAnswer.body) as { apps: AppRecord[] }).apps;
    let diff: string | undefined;
    for (const world of worlds) {
      let d: string | null;
      const parts: string[] = [];
      if (JSON.stringify(summary) !== JSON.stringify(world.summary))
        parts.push(
          `/v1/snapshot ${JSON.stringify(summary)}, expected ${JSON.stringify(world.summary)}`,
        );
      if (JSON.stringify(apps) !== JSON.stringify(world.apps))
        parts.push(`/v1/apps ${JSON.stringify(apps)}, expected ${JSON.stringify(world.apps)}`);
      if (parts.length > 0) d = parts.join("\n    ");
      else d = await this.#routeMismatch(s, world);
      if (d === null) return world;
      diff ??= d;
    }
    return diff ?? "no world to compare with";
  }

  async #routeMismatch(s: ChaosSidecar, world: Expected): Promise<string | null> {
    for (const probe of PROBES) {
      const headers = spelling(this.#random, probe);
      const answer = await this.#get(s, "/v1/route", headers);
      const actual = answerKey(routeAnswerOf(answer));
      const expected = answerKey(routeAnswerRecord(world.apps, world.served, probe));
      if (actual !== expected)
        return `route ${JSON.stringify(headers)} answered "${actual}", expected "${expected}"`;
    }
    return null;
  }

  stats(): RunStats {
    const events: Record<string, number> = {};
    for (const s of this.#sidecars)
      for (const [k, v] of s.events.counts) events[k] = (events[k] ?? 0) + v;
    return { ...this.#stats, events };
  }

  async close(): Promise<void> {
    this.#sampling = false;
    await Promise.allSettled(this.#samplers);
    await Promise.allSettled(this.#sidecars.map((s) => s.stop()));
    this.#agent.destroy();
    await this.#envtest?.close();
  }
}

/** The route answer a converged world gives: readiness from its App records. */
function routeAnswerRecord(
  records: readonly AppRecord[],
  served: Expected["served"],
  probe: Probe,
): RouteAnswer {
  return routeAnswer(served, probe, (app) => records.find((r) => r.name === app.name)!.reason);
}

interface SnapshotBody {
  revision: number;
  synced: boolean;
  apps: number;
  readyApps: number;
  hostnames: number;
  registry: { present: boolean; resourceVersion: string | null; error: string | null } | null;
  conflicts: unknown[];
}

function revisionOf(a: Answer): number | undefined {
  const h = header(a.headers, "x-mirror-revision");
  if (h !== undefined) return Number(h);
  if (a.headers["content-type"]?.startsWith("application/json")) {
    try {
      const body = JSON.parse(a.body) as { revision?: unknown };
      if (typeof body.revision === "number" && body.revision > 0) return body.revision;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function registryRvOf(a: Answer): number | undefined {
  if (!a.headers["content-type"]?.startsWith("application/json")) return undefined;
  try {
    const body = JSON.parse(a.body) as { registry?: { resourceVersion?: unknown } | null };
    const rv = body.registry?.resourceVersion;
    return typeof rv === "string" ? Number(rv) : undefined;
  } catch {
    return undefined;
  }
}
