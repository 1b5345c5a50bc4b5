// One measured phase: a fresh accounting period on the API server, the scenario's action and its
// wait for the fleet, then the accounting collected and turned into a PhaseResult.

import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { rssBytes } from "../proc-stats.ts";
import { convergence, perSecond, phaseFigures } from "./accounting.ts";
import type { ApiServer, Collected } from "./api-server.ts";
import type { FleetConfig } from "./options.ts";
import type { Fleet } from "./replicas.ts";
import type { PhaseResult, Target } from "./results.ts";

/** What a scenario works with. */
export interface FleetContext {
  readonly api: ApiServer;
  readonly fleet: Fleet;
  readonly config: FleetConfig;
  /** The timeoutSeconds of every watch the fleet opened so far, in any phase. */
  readonly watchTimeouts: number[];
  /** Progress on stderr. */
  log(line: string): void;
}

/** Which phase: a short key (file names) and a name for the report. */
export interface PhaseName {
  readonly key: string;
  readonly name: string;
}

/** A phase result before the scenario's own facts and targets. */
export type PhaseBase = Omit<PhaseResult, "facts" | "targets">;

/** What a scenario's action reports back. */
export interface PhaseOutcome {
  /** When each replica showed the expected state (null: it did not in time). */
  readonly converged: ReadonlyMap<string, number | null>;
  /** Convergence is measured from here: one time, or each replica's own start. */
  readonly from: number | ReadonlyMap<string, number>;
  /** The scenario's own figures, once the accounting is in. */
  judge?(c: Collected, base: PhaseBase): { facts?: PhaseResult["facts"]; targets?: Target[] };
}

/** Runs `act` as the phase `phase` and measures it. */
export async function measurePhase(
  ctx: FleetContext,
  phase: PhaseName,
  act: (startedAt: number) => Promise<PhaseOutcome>,
): Promise<PhaseResult> {
  ctx.log(`phase: ${phase.name}`);
  const { now: startedAt } = await ctx.api.call("clear", {});
  const memory = sampleRss(ctx.api.pid);
  const outcome = await act(startedAt);
  // Lets requests still in flight (a list's last pages, a watch's events) reach the accounting.
  await sleep(ctx.config.settleMs);
  const rss = memory.stop();
  const collected = await ctx.api.call("collect", {}, 300_000);
  for (const r of collected.requests)
    if (r.verb === "watch" && r.timeoutSeconds !== undefined)
      ctx.watchTimeouts.push(r.timeoutSeconds);
  const clients = Array.from({ length: ctx.fleet.size }, (_, i) => ctx.fleet.client(i));
  const { fleet, perReplica } = phaseFigures(collected, clients);
  const { convergeMs, converged } = convergence(outcome.converged, outcome.from);
  if (collected.summary.entriesDropped > 0)
    ctx.log(`  warning: ${collected.summary.entriesDropped} request entries dropped (log cap)`);
  const base: PhaseBase = {
    key: phase.key,
    name: phase.name,
    replicas: ctx.fleet.size,
    startedAt,
    durationMs: collected.now - startedAt,
    fleet,
    perReplica,
    convergeMs,
    converged,
    perSecond: perSecond(collected, startedAt, collected.now),
    apiServer: {
      eventLoopBusy: collected.eventLoopBusy,
      cpuMs: collected.cpuMs,
      rssBeforeMiB: rss.before / MIB,
      rssPeakMiB: rss.peak / MIB,
      peakPerReplicaKiB: (rss.peak - rss.before) / 1024 / ctx.fleet.size,
    },
    loadAverage: os.loadavg()[0] ?? 0,
  };
  const judged = outcome.judge?.(collected, base) ?? {};
  const result: PhaseResult = { ...base, facts: judged.facts ?? {}, targets: judged.targets ?? [] };
  const conv = convergeMs === null ? "none" : `${(convergeMs.max / 1000).toFixed(1)} s`;
  ctx.log(
    `  ${converged}/${ctx.fleet.size} converged (slowest ${conv}); ${fleet.requests} requests, ` +
      `${fleet.listPages} list pages, ${(fleet.bytes / 2 ** 20).toFixed(1)} MiB sent; ` +
      `API server busy ${(base.apiServer.eventLoopBusy * 100).toFixed(0)}%`,
  );
  for (const t of result.targets)
    ctx.log(`  target ${t.what}: ${t.figure} (${t.target}) ${t.met ? "met" : "NOT met"}`);
  return result;
}

const MIB = 2 ** 20;

/**
 * The resident memory of process `pid` now and at its peak until `stop`, read every 100 ms from
 * /proc: what the API server holds while it serves the phase's requests (envtest is a Node
 * process, so the peak also holds garbage not yet collected).
 */
function sampleRss(pid: number): { stop(): { before: number; peak: number } } {
  const read = () => {
    try {
      return rssBytes(pid);
    } catch {
      return 0;
    }
  };
  const before = read();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, read());
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return { before, peak: Math.max(peak, read()) };
    },
  };
}

/** The convergence wait of the config, in ms. */
export function convergeTimeout(config: FleetConfig): number {
  return config.convergeTimeoutSeconds * 1000;
}
