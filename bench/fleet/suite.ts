// The order of a run: the API server seeded once; one replica alone for memory; a fleet's cold
// start with streaming lists and with the WatchList feature gate off; a fleet with the shipped
// arguments (one cluster-wide watch) through start, steady state, Registry edits, an API-server
// restart and throttling; then a fleet with `--secret-selector` for what it saves.
// Each scenario's file is rewritten after every phase, so an interrupted run keeps what it measured.

import os from "node:os";
import { gitCommit } from "../machine.ts";
import { startApiServer } from "./api-server.ts";
import { closeProbes } from "./converge.ts";
import type { FleetConfig, Scenario } from "./options.ts";
import type { FleetContext, PhaseName } from "./phase.ts";
import { Fleet } from "./replicas.ts";
import type { MemoryResult, PhaseResult, ScenarioResult } from "./results.ts";
import { writeResult } from "./results.ts";
import { apiRestart } from "./scenarios/api-restart.ts";
import { memoryDuringInitialList } from "./scenarios/memory.ts";
import { registryAdd, registryRemove } from "./scenarios/registry-change.ts";
import { coldStart, rollingRestart } from "./scenarios/start.ts";
import { steadyState } from "./scenarios/steady.ts";
import { throttledRegistryEdit, throttledResumes } from "./scenarios/throttle.ts";
import { startsBothWays } from "./scenarios/watch-list.ts";
import { APP_SELECTOR } from "./world.ts";

function machine(): string {
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  return `${cpus.length}x ${cpus[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load average at start ${load}`;
}

/** Runs the configured scenarios; returns what was written. */
export async function runSuite(
  config: FleetConfig,
  log: (line: string) => void,
): Promise<ScenarioResult[]> {
  const wants = (s: Scenario) => config.scenarios.includes(s);
  const header = {
    label: config.label,
    commit: gitCommit(),
    startedAt: new Date().toISOString(),
    machine: machine(),
    config: {
      replicas: config.replicas,
      apps: config.apps,
      added: config.added,
      secrets: config.secrets,
      valueBytes: config.valueBytes,
      steadySeconds: config.steadySeconds,
      referencedWritesPerSecond: config.referencedWritesPerSecond,
      unrelatedWritesPerSecond: config.unrelatedWritesPerSecond,
      restartDownMs: config.restartDownMs,
      throttleSeconds: config.throttleSeconds,
      throttleShare: config.throttleShare,
      retryAfterSeconds: config.retryAfterSeconds,
      quick: config.quick,
    },
  };
  const phases = new Map<Scenario, PhaseResult[]>();
  const written: ScenarioResult[] = [];
  const save = async (scenario: Scenario, memory?: MemoryResult) => {
    const r: ScenarioResult = {
      scenario,
      ...header,
      phases: phases.get(scenario) ?? [],
      ...(memory === undefined ? {} : { memory }),
    };
    await writeResult(r, config.resultsDir);
    const i = written.findIndex((w) => w.scenario === scenario);
    if (i >= 0) written[i] = r;
    else written.push(r);
  };
  const record = async (scenario: Scenario, result: PhaseResult) => {
    phases.set(scenario, [...(phases.get(scenario) ?? []), result]);
    await save(scenario);
  };

  const seeding = Date.now();
  const api = await startApiServer({
    size: {
      apps: config.apps,
      added: config.added,
      secrets: config.secrets,
      valueBytes: config.valueBytes,
    },
    keepEntries: 1_000_000,
  });
  log(
    `API server at ${api.url}: ${api.facts.secrets} Secrets (${(api.facts.secretJsonBytes / 2 ** 20).toFixed(0)} MiB of JSON) in ${((Date.now() - seeding) / 1000).toFixed(0)} s`,
  );
  const withFleet = async (
    prefix: string,
    extraArgs: readonly string[],
    body: (ctx: FleetContext) => Promise<void>,
  ) => {
    const fleet = await Fleet.create(
      {
        apiUrl: api.url,
        extraArgs,
        prefix,
        startTimeoutMs: 180_000,
        artifact: config.artifact,
        entry: config.entry,
      },
      config.replicas,
    );
    try {
      await body({ api, fleet, config, log, watchTimeouts: [] });
    } finally {
      await fleet.close();
    }
  };
  const name = (key: string, text: string): PhaseName => ({ key, name: text });
  const sel = ", --secret-selector";
  const add = `Registry +${config.added} Apps`;
  const remove = `Registry −${config.added} Apps`;
  const throttle = `${config.throttleShare * 100}% of lists and watches answered 429`;
  const P = {
    cold: name("cold-start", "cold start, whole fleet at once"),
    rolling: name("rolling-restart", "rolling restart, 10% at a time"),
    steady: name("steady", "steady state, cluster-wide watch"),
    add: name("registry-add", add),
    remove: name("registry-remove", remove),
    restart: name("api-restart", "API-server restart losing the watch history"),
    resumes: name("throttle-resumes", `${throttle}, every watch resuming`),
    edit: name("throttle-registry", `${throttle}, ${add} meanwhile`),
    coldSel: name("cold-start-selector", `cold start${sel}`),
    steadySel: name("steady-selector", `steady state${sel}`),
    streaming: name("cold-start-streaming", "cold start, streaming lists"),
    rollingStreaming: name("rolling-restart-streaming", "rolling restart, streaming lists"),
    gateOff: name("cold-start-gate-off", "cold start, WatchList feature gate off"),
    rollingGateOff: name("rolling-restart-gate-off", "rolling restart, WatchList feature gate off"),
    addSel: name("registry-add-selector", `${add}${sel}`),
    removeSel: name("registry-remove-selector", `${remove}${sel}`),
  };
  /** Runs a phase of `scenario` when it is wanted, and records it. */
  const run = async (scenario: Scenario, phase: () => Promise<PhaseResult>) => {
    if (wants(scenario)) await record(scenario, await phase());
  };
  try {
    if (wants("memory")) await save("memory", await memoryDuringInitialList(api, config, log));
    if (wants("watchlist"))
      await withFleet("watchlist", [], async (ctx) => {
        const both = await startsBothWays(ctx, {
          streaming: P.streaming,
          rollingStreaming: P.rollingStreaming,
          gateOff: P.gateOff,
          rollingGateOff: P.rollingGateOff,
        });
        for (const phase of both) await record("watchlist", phase);
      });
    if (config.scenarios.some((s) => s !== "memory" && s !== "watchlist")) {
      await withFleet("replica", [], async (ctx) => {
        const cold = await coldStart(ctx, P.cold);
        await run("start", async () => cold);
        await run("start", () => rollingRestart(ctx, P.rolling));
        await run("steady", () => steadyState(ctx, P.steady));
        await run("registry", () => registryAdd(ctx, P.add));
        await run("registry", () => registryRemove(ctx, P.remove));
        await run("restart", () => apiRestart(ctx, P.restart));
        await run("throttle", () => throttledResumes(ctx, P.resumes));
        await run("throttle", () => throttledRegistryEdit(ctx, P.edit));
      });
    }
    if (wants("start") || wants("steady") || wants("registry")) {
      await withFleet("selected", [`--secret-selector=${APP_SELECTOR}`], async (ctx) => {
        const cold = await coldStart(ctx, P.coldSel);
        await run("start", async () => cold);
        await run("steady", () => steadyState(ctx, P.steadySel));
        await run("registry", () => registryAdd(ctx, P.addSel));
        await run("registry", () => registryRemove(ctx, P.removeSel));
      });
    }
  } finally {
    closeProbes();
    await api.close();
  }
  return written;
}
