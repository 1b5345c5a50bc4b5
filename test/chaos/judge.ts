/**
 * Judging what the sidecars answer against the model (the rules are check.ts's). The judge keeps
 * what the rules need across answers: the window of states since the last quiescent point, per
 * sidecar the highest revision and Registry resourceVersion seen (they never go back) and the
 * earliest state its `/v1/apps` parts fit (they only move forward), the Registry a sidecar
 * settled on after a relist skipped the last good value, and the first violation, which ends
 * the run. A restarted sidecar starts these again, and, until it converges, may serve states
 * back to the one its state file's Registry came with.
 */
import type { AppRecord } from "../../src/ops/records.ts";
import {
  type Expected,
  judgeApps,
  judgeRoute,
  judgeSnapshotRegistry,
  type Viewer,
} from "./check.ts";
import type { History } from "./history.ts";
import type { ClusterState } from "./model.ts";
import { Restarts, type SavedInputs } from "./restarts.ts";
import type { Probe } from "./route-answer.ts";
import type { ChaosSidecar } from "./sidecar.ts";

/** CHAOS_VERBOSE=1 prints every answer allowed only as skew. */
const VERBOSE = process.env.CHAOS_VERBOSE === "1";

/** `/v1/snapshot` as the sidecar shows it. */
export interface SnapshotBody {
  revision: number;
  synced: boolean;
  apps: number;
  readyApps: number;
  hostnames: number;
  registry: { present: boolean; resourceVersion: string | null; error: string | null } | null;
  conflicts: unknown[];
}

/** What a sidecar shows of its whole world at once: its Snapshot and its App records. */
export interface World {
  readonly snapshot: SnapshotBody;
  readonly apps: readonly AppRecord[];
}

/** The ordering facts of one answer. */
export interface Versions {
  readonly revision: number | undefined;
  readonly registryRv: number | undefined;
}

/** The highest versions a sidecar answered with on one listener. */
type Floor = { revision: number; registryRv: number };

/**
 * Where an answer came from. Versions never go back on one listener, but the data listener's
 * thread gets each Snapshot's view a moment after the ops listener serves it (docs/serving.md,
 * "Where the data plane's requests are answered"), so each listener has a floor of its own.
 */
export type Listener = "route" | "ops";

export class Judge {
  readonly #history: History;
  #windowStart = 0;
  readonly #restarts: Restarts;
  readonly #floors = new Map<string, Floor>();
  readonly #appsFloors = new Map<string, { registry: number; secrets: Map<string, number> }>();
  readonly #skipped = new Map<string, { lastGoodIndex: number; served: Expected["served"] }>();
  /** Answers no single cluster state explains, allowed because the watches lag each other. */
  skew = 0;
  /** 503s for a newly referenced Secret whose fetch failed. */
  unfetched = 0;
  firstFailure: string | undefined;
  /** The operation being applied, named in a failure. */
  lastOp = "start";

  constructor(history: History, sidecars: readonly ChaosSidecar[]) {
    this.#history = history;
    this.#restarts = new Restarts(history);
    for (const s of sidecars) {
      for (const listener of ["route", "ops"] as const)
        this.#floors.set(`${s.name} ${listener}`, { revision: 0, registryRv: 0 });
      this.#appsFloors.set(s.name, { registry: 0, secrets: new Map() });
    }
  }

  /** The global index of the first state of the window. */
  get windowStart(): number {
    return this.#windowStart;
  }

  /**
   * Where the states a sidecar may serve start: the window's, or, after a restart and until it
   * converges, as far back as its state file may reach.
   */
  windowStartFor(s: ChaosSidecar): number {
    return this.#restarts.startFor(s.name, this.#windowStart);
  }

  /** A sidecar's restart began: its new process counts revisions from 1 again. */
  restarted(s: ChaosSidecar): void {
    for (const listener of ["route", "ops"] as const)
      this.#floors.set(`${s.name} ${listener}`, { revision: 0, registryRv: 0 });
    this.#appsFloors.set(s.name, { registry: 0, secrets: new Map() });
  }

  /** A restarted sidecar's state file holds `saved` (null: nothing usable): see Restarts. */
  restartedFrom(s: ChaosSidecar, saved: SavedInputs | null): void {
    const problem = this.#restarts.saved(s.name, saved);
    if (problem !== null) this.fail(`sidecar ${s.name}: ${problem}`);
  }

  /** The states since `windowStart`. */
  window(windowStart = this.#windowStart): ClusterState[] {
    return this.#history.states.slice(windowStart);
  }

  /** A quiescent point: the window restarts at the latest state. */
  newWindow(): void {
    this.#windowStart = this.#history.latestIndex;
  }

  /** Records a violation; the first one is the run's failure. */
  fail(message: string): void {
    this.firstFailure ??= `${message}\n  (during: ${this.lastOp})`;
  }

  /** The sidecar facts the rules need, for answers given since `windowStart`. */
  viewer(s: ChaosSidecar, windowStart = this.#windowStart): Viewer {
    const skipped = this.#skipped.get(s.name);
    return {
      visible: (ns) => s.visible(ns),
      serveCredentials: s.serveCredentials,
      fetchFailed: s.events.fetchFailures.some((at) => at >= windowStart),
      registryRelisted: s.events.registryRelists.some((at) => at >= windowStart),
      forgotLastGood: this.#restarts.forgotLastGood(s.name),
      served: (state) =>
        skipped !== undefined && state.lastGoodIndex === skipped.lastGoodIndex
          ? skipped.served
          : state.served,
    };
  }

  /** The versions a sidecar had answered with on `listener` when a request left. */
  floorOf(s: ChaosSidecar, listener: Listener): Readonly<Floor> {
    return { ...this.#floors.get(`${s.name} ${listener}`)! };
  }

  /**
   * An answer's versions may not be below what the same listener of the sidecar answered before
   * the request left.
   */
  ordered(
    s: ChaosSidecar,
    listener: Listener,
    path: string,
    before: Readonly<Floor>,
    answer: Versions,
  ): void {
    const now = this.#floors.get(`${s.name} ${listener}`)!;
    const { revision, registryRv } = answer;
    if (revision !== undefined) {
      if (revision < before.revision)
        this.fail(
          `sidecar ${s.name}: revision went back from ${before.revision} to ${revision} (${path})`,
        );
      now.revision = Math.max(now.revision, revision);
    }
    if (registryRv !== undefined) {
      if (registryRv < before.registryRv)
        this.fail(
          `sidecar ${s.name}: Registry resourceVersion went back from ${before.registryRv} to ${registryRv}`,
        );
      now.registryRv = Math.max(now.registryRv, registryRv);
    }
  }

  /** A `/v1/route` answer (its key, see answerKey) to `headers` asking about `probe`. */
  route(
    s: ChaosSidecar,
    probe: Probe,
    headers: Record<string, string>,
    actual: string,
    revision: number | undefined,
    windowStart: number,
  ): void {
    const window = this.window(windowStart);
    const judged = judgeRoute(window, probe, actual, this.viewer(s, windowStart));
    this.#count(judged.verdict);
    if (judged.verdict === "skew" && VERBOSE)
      console.log(
        `skew: sidecar ${s.name} ${probe.raw} "${actual}"; single states allow ${JSON.stringify(judgeRoute(window.slice(-1), probe, "", this.viewer(s, windowStart)).allowed)} (latest)`,
      );
    if (judged.verdict === "violation") {
      this.fail(
        `sidecar ${s.name}: ${JSON.stringify(headers)} answered "${actual}" (revision ${revision ?? "-"}); ` +
          `allowed since the last quiescent point: ${judged.allowed.map((a) => `"${a}"`).join(", ")}`,
      );
    }
  }

  /**
   * A `/v1/apps` answer (`records` when it was a 200). It is whole (one Registry, each Secret at
   * some state of the window) and moves only forward: each part must fit a state at or after the
   * earliest state an earlier answer allowed.
   */
  apps(
    s: ChaosSidecar,
    answer: { status: number; body: string; records: readonly AppRecord[] | null },
    windowStart: number,
  ): void {
    if (answer.records === null) {
      this.fail(`sidecar ${s.name}: /v1/apps ${answer.status}`);
      return;
    }
    const floors = this.#appsFloors.get(s.name)!;
    const before = { registry: floors.registry, secrets: new Map(floors.secrets) };
    const judged = judgeApps(
      this.window(windowStart),
      windowStart,
      answer.records,
      this.viewer(s, windowStart),
    );
    this.#count(judged.verdict);
    if (judged.verdict === "violation") {
      this.fail(`sidecar ${s.name}: /v1/apps ${judged.detail}: ${answer.body}`);
      return;
    }
    if (judged.verdict === "skew" && VERBOSE)
      console.log(
        `skew: sidecar ${s.name} /v1/apps: Registry fits ${judged.registryAt.join(",")}; ${[...judged.secretAt].map(([k, v]) => `${k} fits ${v.join(",")}`).join("; ")}`,
      );
    const back = (what: string, at: readonly number[], floor: number | undefined) =>
      floor !== undefined &&
      at.length > 0 &&
      Math.max(...at) < floor &&
      this.fail(
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

  /** A `/v1/snapshot` answer during faults: synced, with a Registry status of the window. */
  snapshot(
    s: ChaosSidecar,
    answer: { status: number; body: string; snapshot: SnapshotBody },
    windowStart: number,
  ): void {
    const { snapshot } = answer;
    if (answer.status !== 200 || !snapshot.synced || snapshot.registry === null) {
      this.fail(`sidecar ${s.name}: /v1/snapshot ${answer.status} ${answer.body}`);
      return;
    }
    const problem = judgeSnapshotRegistry(this.window(windowStart), snapshot.registry);
    if (problem !== null) this.fail(`sidecar ${s.name}: ${problem}`);
  }

  /** A sidecar converged on `found`: remember when it is not the latest state's Registry. */
  settled(s: ChaosSidecar, found: Expected): void {
    this.#restarts.converged(s.name);
    const window = this.window();
    const latest = window[window.length - 1]!;
    if (JSON.stringify(found.served) === JSON.stringify(latest.served))
      this.#skipped.delete(s.name);
    else this.#skipped.set(s.name, { lastGoodIndex: latest.lastGoodIndex, served: found.served });
  }

  #count(verdict: string): void {
    if (verdict === "skew") this.skew += 1;
    if (verdict === "unfetched") this.unfetched += 1;
  }
}
