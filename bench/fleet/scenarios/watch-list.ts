// Scenario 6: the whole fleet starting at once against an API server that serves streaming lists,
// then against the same server with its WatchList feature gate off (ADR 57). The first costs a
// watch per reflector and no list; the second a refused watch per replica, then paged lists.

import type { Collected } from "../api-server.ts";
import type { FleetContext, PhaseBase, PhaseName } from "../phase.ts";
import type { PhaseResult, Target } from "../results.ts";
import { coldStart } from "./start.ts";

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
  const streaming = await coldStartJudged(ctx, phases.streaming, streamingTargets);
  await ctx.api.call("featureGates", { WatchList: false });
  try {
    return [streaming, await coldStartJudged(ctx, phases.gateOff, gateOffTargets)];
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

/** Every replica started at once, judged by `targets`; stopped again once measured. */
async function coldStartJudged(
  ctx: FleetContext,
  phase: PhaseName,
  targets: (c: Collected, base: PhaseBase) => Target[],
): Promise<PhaseResult> {
  try {
    return await coldStart(ctx, phase, (c, base) => ({
      facts: { "LIST requests for Secrets, fleet": secretLists(c) },
      targets: targets(c, base),
    }));
  } finally {
    await ctx.fleet.stop(Array.from({ length: ctx.fleet.size }, (_, i) => i));
  }
}
