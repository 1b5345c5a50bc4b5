/**
 * Sampling the sidecars: GETs over a small kept-alive pool (the test kit's client), the parts of
 * each answer the contract fixes, and one loop per sidecar that keeps asking about routes, Apps
 * and the Snapshot until the run ends, handing every answer to the judge.
 */
import { Agent } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { AppRecord } from "../../src/ops/records.ts";
import { type Got, get } from "../support/http.ts";
import type { Random } from "../support/random.ts";
import type { Judge, SnapshotBody, Versions, World } from "./judge.ts";
import { PROBES, spelling } from "./probes.ts";
import { answerKey, type Probe, type RouteAnswer } from "./route-answer.ts";
import type { ChaosSidecar } from "./sidecar.ts";

const header = (a: Got, name: string): string | undefined => {
  const v = a.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const isJson = (a: Got) => a.headers["content-type"]?.startsWith("application/json") === true;

/** The contract's parts of a `/v1/route` answer; anything off-contract keeps its details. */
function routeAnswerOf(a: Got): RouteAnswer {
  const reason = header(a, "x-mirror-reason");
  const app = header(a, "x-mirror-app");
  const revision = header(a, "x-mirror-revision");
  const retryAfter = header(a, "retry-after");
  if (a.status === 200 && app !== undefined && revision !== undefined && a.body === "") {
    const upstream = header(a, "x-mirror-upstream") ?? null;
    return { status: 200, app, upstream, credential: header(a, "x-mirror-credential") ?? null };
  }
  if (
    a.status === 503 &&
    (reason === "secret-unavailable" || reason === "secret-unusable") &&
    app !== undefined &&
    retryAfter
  )
    return { status: 503, reason, app };
  // No retry-after: only the operator changes it (docs/serving.md, "Credentials").
  if (a.status === 503 && reason === "credentials-off" && app !== undefined && !retryAfter)
    return { status: 503, reason, app };
  if (a.status === 404 && reason === "unknown-host") return { status: 404 };
  if (a.status === 400 && reason === "bad-host") return { status: 400 };
  return { status: a.status, other: `${reason ?? "-"} ${app ?? "-"} ${a.body.slice(0, 80)}` };
}

/** The Snapshot revision an answer carries (route header or JSON body), if any. */
function revisionOf(a: Got): number | undefined {
  const h = header(a, "x-mirror-revision");
  if (h !== undefined) return Number(h);
  if (!isJson(a)) return undefined;
  try {
    const body = JSON.parse(a.body) as { revision?: unknown };
    if (typeof body.revision === "number" && body.revision > 0) return body.revision;
  } catch {
    return undefined;
  }
  return undefined;
}

/** The Registry resourceVersion a JSON answer carries, if any. */
function registryRvOf(a: Got): number | undefined {
  if (!isJson(a)) return undefined;
  try {
    const body = JSON.parse(a.body) as { registry?: { resourceVersion?: unknown } | null };
    const rv = body.registry?.resourceVersion;
    return typeof rv === "string" ? Number(rv) : undefined;
  } catch {
    return undefined;
  }
}

const versionsOf = (a: Got): Versions => ({ revision: revisionOf(a), registryRv: registryRvOf(a) });

/**
 * A sidecar's restart began while the request was out, or before it left: its answer, or the
 * failure to get one, is not the new process's and is not judged.
 */
export class Restarted extends Error {}

/** Asks the sidecars; every answer's versions go to the judge's ordering check. */
export class Prober {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 4 });
  readonly #judge: Judge;
  readonly #random: Random;

  constructor(judge: Judge, random: Random) {
    this.#judge = judge;
    this.#random = random;
  }

  /** GETs `path` from a sidecar; rejects when it does not answer within 3 s. */
  async get(s: ChaosSidecar, path: string, headers: Record<string, string> = {}): Promise<Got> {
    const listener = path.startsWith("/v1/route") ? "route" : "ops";
    const incarnation = s.incarnation;
    const current = () => !s.restarting && s.incarnation === incarnation;
    if (!current()) throw new Restarted(`sidecar ${s.name} is restarting`);
    const before = this.#judge.floorOf(s, listener);
    const port = listener === "route" ? s.port : s.opsPort;
    let answer: Got;
    try {
      answer = await get(port, path, headers, { agent: this.#agent, timeoutMs: 3_000 });
    } catch (e) {
      if (!current()) throw new Restarted(`sidecar ${s.name} restarted: ${(e as Error).message}`);
      throw e;
    }
    if (!current()) throw new Restarted(`sidecar ${s.name} restarted`);
    this.#judge.ordered(s, listener, path, before, versionsOf(answer));
    return answer;
  }

  /** Asks about `probe` in a random spelling; the answer as its key (see answerKey). */
  async route(
    s: ChaosSidecar,
    probe: Probe,
  ): Promise<{ headers: Record<string, string>; actual: string; answer: Got }> {
    const headers = spelling(this.#random, probe);
    const answer = await this.get(s, "/v1/route", headers);
    return { headers, actual: answerKey(routeAnswerOf(answer)), answer };
  }

  /** The sidecar's Snapshot and App records, or why they could not be read. */
  async world(s: ChaosSidecar): Promise<World | string> {
    const snapshot = await this.get(s, "/v1/snapshot");
    const apps = await this.get(s, "/v1/apps");
    if (snapshot.status !== 200 || apps.status !== 200)
      return `/v1/snapshot ${snapshot.status}, /v1/apps ${apps.status}`;
    return {
      snapshot: JSON.parse(snapshot.body) as SnapshotBody,
      apps: (JSON.parse(apps.body) as { apps: AppRecord[] }).apps,
    };
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** One loop per sidecar, each sample a random route, `/v1/apps` or `/v1/snapshot` question. */
export class Sampler {
  readonly #prober: Prober;
  readonly #judge: Judge;
  readonly #random: Random;
  #running = false;
  #loops: Promise<void>[] = [];
  samples = 0;

  constructor(prober: Prober, judge: Judge, random: Random) {
    this.#prober = prober;
    this.#judge = judge;
    this.#random = random;
  }

  start(sidecars: readonly ChaosSidecar[]): void {
    this.#running = true;
    this.#loops = sidecars.map((s) => this.#loop(s));
  }

  /** Ends every loop after its current sample. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.allSettled(this.#loops);
  }

  async #loop(s: ChaosSidecar): Promise<void> {
    const r = this.#random;
    while (this.#running) {
      const windowStart = this.#judge.windowStartFor(s);
      try {
        const kind = r.int(10);
        if (kind < 2) await this.#apps(s, windowStart);
        else if (kind === 2) await this.#snapshot(s, windowStart);
        else await this.#route(s, r.pick(PROBES), windowStart);
        this.samples += 1;
      } catch (e) {
        if (!(e instanceof Restarted))
          this.#judge.fail(`sidecar ${s.name} did not answer: ${(e as Error).message}`);
      }
      await sleep(r.between(2, 12));
    }
  }

  async #route(s: ChaosSidecar, probe: Probe, windowStart: number): Promise<void> {
    const { headers, actual, answer } = await this.#prober.route(s, probe);
    this.#judge.route(s, probe, headers, actual, revisionOf(answer), windowStart);
  }

  async #apps(s: ChaosSidecar, windowStart: number): Promise<void> {
    const answer = await this.#prober.get(s, "/v1/apps");
    const records =
      answer.status === 200 ? (JSON.parse(answer.body) as { apps: AppRecord[] }).apps : null;
    this.#judge.apps(s, { ...answer, records }, windowStart);
  }

  async #snapshot(s: ChaosSidecar, windowStart: number): Promise<void> {
    const answer = await this.#prober.get(s, "/v1/snapshot");
    const snapshot = JSON.parse(answer.body) as SnapshotBody;
    this.#judge.snapshot(s, { ...answer, snapshot }, windowStart);
  }
}
