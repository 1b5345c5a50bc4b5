// Scenario 1: the whole fleet starting at once (a new install, a node pool replaced), and a rolling
// restart 10% at a time (a Deployment rollout): each replica lists what it watches.

import type { Collected } from "../api-server.ts";
import { allReady, untilConverged } from "../converge.ts";
import {
  convergeTimeout,
  type FleetContext,
  measurePhase,
  type PhaseBase,
  type PhaseName,
} from "../phase.ts";
import type { PhaseResult, Target } from "../results.ts";

/** What a scenario adds to a start phase: facts and targets of its own. */
export interface Judged {
  readonly facts: PhaseResult["facts"];
  readonly targets: Target[];
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/**
 * Every replica started at once; each converges when it serves every App ready. `judged` adds
 * facts and targets of the phase's own.
 */
export function coldStart(
  ctx: FleetContext,
  phase: PhaseName,
  judged?: (c: Collected, base: PhaseBase) => Judged,
): Promise<PhaseResult> {
  return measurePhase(ctx, phase, async () => {
    const started = await ctx.fleet.start(range(0, ctx.fleet.size));
    const from = new Map(started.map((r) => [r.client, r.spawnedAt]));
    const converged = await untilConverged(started, allReady(ctx.config.apps), {
      timeoutMs: convergeTimeout(ctx.config),
    });
    return {
      converged,
      from,
      judge: (c, base) => {
        const last = Math.max(...[...converged.values()].map((t) => t ?? 0));
        const own = judged?.(c, base);
        return {
          facts: {
            ...own?.facts,
            "whole fleet converged after (ms)": last > 0 ? last - base.startedAt : null,
          },
          ...(own === undefined ? {} : { targets: own.targets }),
        };
      },
    };
  });
}

/**
 * Replicas replaced a tenth at a time, each wave once the previous one serves every App; `judged`
 * adds facts and targets of the phase's own.
 */
export function rollingRestart(
  ctx: FleetContext,
  phase: PhaseName,
  judged?: (c: Collected, base: PhaseBase) => Judged,
): Promise<PhaseResult> {
  return measurePhase(ctx, phase, async () => {
    const size = ctx.fleet.size;
    const wave = Math.max(1, Math.ceil(size / 10));
    const from = new Map<string, number>();
    const converged = new Map<string, number | null>();
    const waves: number[] = [];
    for (let i = 0; i < size; i += wave) {
      const began = Date.now();
      const slots = range(i, Math.min(size, i + wave));
      await ctx.fleet.stop(slots);
      const started = await ctx.fleet.start(slots);
      for (const r of started) from.set(r.client, r.spawnedAt);
      const at = await untilConverged(started, allReady(ctx.config.apps), {
        timeoutMs: convergeTimeout(ctx.config),
      });
      for (const [client, t] of at) converged.set(client, t);
      waves.push(Date.now() - began);
    }
    return {
      converged,
      from,
      judge: (c, base) => {
        const own = judged?.(c, base);
        return {
          facts: {
            ...own?.facts,
            "replicas per wave": wave,
            waves: waves.length,
            "slowest wave (ms)": Math.max(...waves),
          },
          ...(own === undefined ? {} : { targets: own.targets }),
        };
      },
    };
  });
}
