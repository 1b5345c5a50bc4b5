// Scenario 6: the whole fleet starting at once, then restarted a tenth at a time, against an API
// server that serves streaming lists, then against the same server with its WatchList feature
// gate off (ADR 57). The first costs a watch per reflector and no list; the second a refused
// watch per replica, then paged lists.

import type { Collected } from "../api-server.ts";
import type { FleetContext, PhaseBase, PhaseName } from "../phase.ts";
import type { PhaseResult, Target } from "../results.ts";
import { coldStart, type Judged, rollingRestart } from "./start.ts";

/** The phases, gate on then off: a cold start and a rolling restart each. */
export interface WatchListPhases {
  readonly streaming: PhaseName;
  readonly rollingStreaming: PhaseName;
  readonly gateOff: PhaseName;
  readonly rollingGateOff: PhaseName;
}

/** Both ways; the fleet is stopped after each and the gate is left on. */
export async function startsBothWays(
  ctx: FleetContext,
  phases: WatchListPhases,
): Promise<PhaseResult[]> {
  await ctx.api.call("featureGates", { WatchList: true });
  const streaming = await startAndRoll(ctx, [phases.streaming, phases.rollingStreaming], {
    cold: streamingTargets,
    rolling: streamingTargets,
  });
  await ctx.api.call("featureGates", { WatchList: false });
  try {
    const off = await startAndRoll(ctx, [phases.gateOff, phases.rollingGateOff], {
      cold: gateOffTargets,
      rolling: gateOffTargets,
    });
    return [...streaming, ...off];
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
      what: `${base.name}, ${base.replicas} replicas: LIST requests for Secrets`,
      target: "0",
      figure: `${lists} (${base.fleet.streamedLists ?? 0} streaming lists)`,
      met: lists === 0,
    },
  ];
}

function gateOffTargets(_: Collected, base: PhaseBase): Target[] {
  return [
    {
      what: `${base.name}, ${base.replicas} replicas: fall back and converge`,
      target: "every replica",
      figure: `${base.converged} of ${base.replicas} converged; ${base.fleet.refusedStreams ?? 0} streaming lists refused`,
      met: base.converged === base.replicas,
    },
  ];
}

/**
 * Every replica started at once, then restarted a tenth at a time, each judged by its `targets`;
 * the fleet is stopped again once measured.
 */
async function startAndRoll(
  ctx: FleetContext,
  [cold, rolling]: readonly [PhaseName, PhaseName],
  targets: Record<"cold" | "rolling", (c: Collected, base: PhaseBase) => Target[]>,
): Promise<PhaseResult[]> {
  const judged =
    (of: (c: Collected, base: PhaseBase) => Target[]) =>
    (c: Collected, base: PhaseBase): Judged => ({
      facts: { "LIST requests for Secrets, fleet": secretLists(c) },
      targets: of(c, base),
    });
  try {
    const started = await coldStart(ctx, cold, judged(targets.cold));
    return [started, await rollingRestart(ctx, rolling, judged(targets.rolling))];
  } finally {
    await ctx.fleet.stop(Array.from({ length: ctx.fleet.size }, (_, i) => i));
  }
}
