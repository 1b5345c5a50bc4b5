// Scenario 6: the whole fleet starting at once against an API server that serves streaming lists,
// then against the same server with its WatchList feature gate off (ADR 57). The first costs a
// watch per reflector and no list; the second a refused watch per replica, then paged lists.

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

/** The two phases, gate on then off. */
export interface WatchListPhases {
  readonly streaming: PhaseName;
  readonly gateOff: PhaseName;
}

/** Both cold starts; the fleet is stopped after each and the gate is left on. */
export async function coldStartsBothWays(
  ctx: FleetContext,
  phases: WatchListPhases,
): Promise<PhaseResult[]> {
  await ctx.api.call("featureGates", { WatchList: true });
  const streaming = await coldStart(ctx, phases.streaming, streamingTargets);
  await ctx.api.call("featureGates", { WatchList: false });
  try {
    return [streaming, await coldStart(ctx, phases.gateOff, gateOffTargets)];
  } finally {
    await ctx.api.call("featureGates", { WatchList: true });
  }
}

/** LIST requests for Secrets: pages of paged lists, streaming lists are watches. */
const secretLists = (c: Collected) => c.summary.byResource.secrets?.list?.requests ?? 0;

function streamingTargets(c: Collected, base: PhaseBase): Target[] {
  const lists = secretLists(c);
  return [
    {
      what: `cold start with streaming lists, ${base.replicas} replicas: LIST requests for Secrets`,
      target: "0",
      figure: `${lists} (${base.fleet.streamedLists ?? 0} streaming lists)`,
      met: lists === 0,
    },
  ];
}

function gateOffTargets(_: Collected, base: PhaseBase): Target[] {
  return [
    {
      what: `cold start with the WatchList feature gate off, ${base.replicas} replicas: fall back and converge`,
      target: "every replica",
      figure: `${base.converged} of ${base.replicas} converged; ${base.fleet.refusedStreams ?? 0} streaming lists refused`,
      met: base.converged === base.replicas,
    },
  ];
}

/** Every replica started at once; stopped again once measured. */
async function coldStart(
  ctx: FleetContext,
  phase: PhaseName,
  targets: (c: Collected, base: PhaseBase) => Target[],
): Promise<PhaseResult> {
  const all = Array.from({ length: ctx.fleet.size }, (_, i) => i);
  try {
    return await measurePhase(ctx, phase, async () => {
      const started = await ctx.fleet.start(all);
      const from = new Map(started.map((r) => [r.client, r.spawnedAt]));
      const converged = await untilConverged(started, allReady(ctx.config.apps), {
        timeoutMs: convergeTimeout(ctx.config),
      });
      return {
        converged,
        from,
        judge: (c, base) => {
          const last = Math.max(...[...converged.values()].map((t) => t ?? 0));
          return {
            facts: {
              "LIST requests for Secrets, fleet": secretLists(c),
              "whole fleet converged after (ms)": last > 0 ? last - base.startedAt : null,
            },
            targets: targets(c, base),
          };
        },
      };
    });
  } finally {
    await ctx.fleet.stop(all);
  }
}
