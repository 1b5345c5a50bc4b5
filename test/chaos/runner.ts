/**
 * One chaos run: an envtest, three sidecars, a seed's operations applied in order (apply.ts)
 * while every sidecar is sampled continuously (sample.ts) and each answer judged against the
 * model (judge.ts); at each quiescent point every sidecar must converge on the model. The first
 * violation ends the run.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { seeded } from "../support/random.ts";
import { waitUntil } from "../support/wait.ts";
import { Cluster } from "./apply.ts";
import { type Expected, expectedAtQuiescence } from "./check.ts";
import { converged } from "./converged.ts";
import { Judge } from "./judge.ts";
import { describeOp, type Op } from "./ops.ts";
import { PROBES } from "./probes.ts";
import { Prober, Restarted, Sampler } from "./sample.ts";
import { type ChaosSidecar, type SidecarSpec, startChaosSidecar } from "./sidecar.ts";

/**
 * Three replicas: cluster-wide with two watch timeouts, one of them serving credentials (which
 * keeps their values, fetched again when a Registry makes a key a credential's) and keeping a
 * state file (restarted by `replica-restart`), and one watching three namespaces only.
 */
const SIDECARS: readonly SidecarSpec[] = [
  { name: "a", flags: ["--watch-timeout", "1"], backoff: { initialMs: 50, capMs: 1000 } },
  {
    name: "b",
    flags: ["--watch-timeout", "2", "--serve-credentials", "true"],
    backoff: { initialMs: 100, capMs: 2000 },
    stateFile: true,
  },
  {
    name: "c",
    flags: ["--watch-timeout", "1", "--secret-namespaces", "tenant-a,tenant-b,platform"],
    backoff: { initialMs: 50, capMs: 1000 },
  },
];

interface RunOptions {
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

class Violation extends Error {}

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

/** The parts of a run, wired together; `start` brings them up in order. */
class Run {
  readonly #options: RunOptions;
  readonly #seed: number;
  #cluster: Cluster | undefined;
  #sidecars: ChaosSidecar[] = [];
  #judge: Judge | undefined;
  #prober: Prober | undefined;
  #sampler: Sampler | undefined;
  #quiescentPoints = 0;
  #maxConvergeMs = 0;
  /** Each sidecar's restart under way, which ends the run if it fails. */
  readonly #restarts = new Map<string, Promise<void>>();

  constructor(seed: number, options: RunOptions) {
    this.#seed = seed;
    this.#options = options;
  }

  get firstFailure(): string | undefined {
    return this.#judge?.firstFailure;
  }

  async start(initial: readonly Op[]): Promise<void> {
    const cluster = await Cluster.start(initial, this.#options.bookmarkIntervalMs);
    this.#cluster = cluster;
    this.#sidecars = await Promise.all(
      SIDECARS.map((spec) =>
        startChaosSidecar(spec, cluster.api, () => cluster.history.latestIndex),
      ),
    );
    const random = seeded(this.#seed ^ 0x5eed);
    const judge = new Judge(cluster.history, this.#sidecars);
    this.#judge = judge;
    this.#prober = new Prober(judge, random);
    this.#sampler = new Sampler(this.#prober, judge, random);
    await this.#quiesce();
    this.#sampler.start(this.#sidecars);
  }

  throwIfFailed(): void {
    const failure = this.firstFailure;
    if (failure !== undefined) throw new Violation(failure);
  }

  async apply(op: Op): Promise<void> {
    this.#judge!.lastOp = describeOp(op);
    if (op.op === "quiesce") await this.#quiesce();
    else if (op.op === "replica-restart") await this.#restart(op);
    else await this.#cluster!.apply(op);
    await new Promise((r) => setImmediate(r));
  }

  /**
   * Begins a sidecar's restart, after the one before it; the operations after it run while it is
   * down and starting, as a cluster goes on while a pod's container restarts.
   */
  async #restart(op: Extract<Op, { op: "replica-restart" }>): Promise<void> {
    const s = this.#sidecars.find((x) => x.name === op.sidecar);
    if (s === undefined) throw new Error(`no sidecar ${op.sidecar}`);
    await this.#restarts.get(s.name);
    const judge = this.#judge!;
    judge.restarted(s);
    const restart = s
      .restart(op.downMs, op.crash, (saved) => judge.restartedFrom(s, saved))
      .catch((e: unknown) =>
        judge.fail(`sidecar ${s.name} did not restart: ${(e as Error).message}`),
      );
    this.#restarts.set(s.name, restart);
  }

  /** Faults off; polls every sidecar until its whole world equals the model, or fails. */
  async #quiesce(): Promise<void> {
    const cluster = this.#cluster!;
    const judge = this.#judge!;
    const prober = this.#prober!;
    cluster.api.faults.reset();
    const started = Date.now();
    const pending = new Set(this.#sidecars);
    const last = new Map<string, string>();
    const converge = async (s: ChaosSidecar): Promise<void> => {
      // A sidecar restarted since it last converged may keep what its state file held, from
      // before the window (seed 253: a refused App kept as the file's Registry had it).
      const from = judge.windowStartFor(s);
      const viewer = { ...judge.viewer(s, from), registryRelists: s.events.registryRelists };
      const worlds = expectedAtQuiescence(judge.window(from), viewer);
      let found: Expected | string;
      try {
        const world = await prober.world(s);
        found =
          typeof world === "string"
            ? world
            : await converged(world, worlds, (probe) => prober.route(s, probe), PROBES);
      } catch (e) {
        if (!(e instanceof Restarted)) throw e;
        found = "restarting";
      }
      if (typeof found === "string") {
        last.set(s.name, found);
        return;
      }
      pending.delete(s);
      judge.settled(s, found);
    };
    // A sidecar that does not answer ends the run at once, as it would while sampling.
    let broken: unknown;
    const allConverged = await waitUntil(
      async () => {
        try {
          for (const s of [...pending]) await converge(s);
        } catch (e) {
          broken = e;
          return true;
        }
        return pending.size === 0;
      },
      { timeoutMs: this.#options.quiesceDeadlineMs, intervalMs: 50 },
    ).catch(() => false);
    if (broken !== undefined) throw broken;
    if (!allConverged) {
      const names = [...pending].map((s) => s.name);
      throw new Violation(
        `sidecars ${names.join(", ")} did not converge within ${this.#options.quiesceDeadlineMs} ms: ` +
          names.map((n) => `\n  ${n}: ${last.get(n)}`).join(""),
      );
    }
    this.#quiescentPoints += 1;
    this.#maxConvergeMs = Math.max(this.#maxConvergeMs, Date.now() - started);
    judge.newWindow();
  }

  stats(): RunStats {
    const events: Record<string, number> = {};
    for (const s of this.#sidecars)
      for (const [k, v] of s.events.counts) events[k] = (events[k] ?? 0) + v;
    return {
      samples: this.#sampler?.samples ?? 0,
      skew: this.#judge?.skew ?? 0,
      unfetched: this.#judge?.unfetched ?? 0,
      quiescentPoints: this.#quiescentPoints,
      maxConvergeMs: this.#maxConvergeMs,
      events,
    };
  }

  async close(): Promise<void> {
    await this.#sampler?.stop();
    await Promise.all(this.#restarts.values());
    await Promise.allSettled(this.#sidecars.map((s) => s.stop()));
    this.#prober?.close();
    await this.#cluster?.close();
  }
}
