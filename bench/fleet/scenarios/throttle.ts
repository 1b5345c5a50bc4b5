// Scenario 5: the API server sheds load. For a while it answers a share of lists and watches with
// 429 and a Retry-After, as API Priority and Fairness does. Two phases:
//
// - every watch ends as throttling starts (history kept, as when the server drops its watchers):
//   each reflector's resume meets the throttling, and nothing more needs fetching afterwards, so
//   the time to converge after it ends is the retry policy alone;
// - a Registry edit adding Apps arrives while throttling: what fetches the added Secrets meets it.
//
// A replica must never come back sooner than the server asked, and must catch up once it stops.

import { retryGaps } from "../accounting.ts";
import type { Collected } from "../api-server.ts";
import { allReady, both, type Probe, secretAtLeast, untilConverged } from "../converge.ts";
import {
  convergeTimeout,
  type FleetContext,
  measurePhase,
  type PhaseBase,
  type PhaseName,
} from "../phase.ts";
import type { PhaseResult, Target } from "../results.ts";

/** Throttles for `throttleSeconds` around `act`; convergence is measured from its end. */
function throttled(
  ctx: FleetContext,
  phase: PhaseName,
  act: () => Promise<Probe>,
): Promise<PhaseResult> {
  const c = ctx.config;
  const retryAfterMs = c.retryAfterSeconds * 1000;
  return measurePhase(ctx, phase, async () => {
    const throttle = await ctx.api.call("throttle", {
      share: c.throttleShare,
      retryAfterSeconds: c.retryAfterSeconds,
      forMs: c.throttleSeconds * 1000,
      seed: 1,
    });
    const probe = await act();
    const converged = await untilConverged(ctx.fleet.replicas(), probe, {
      timeoutMs: c.throttleSeconds * 1000 + convergeTimeout(c),
    });
    await ctx.api.call("reset", {});
    return {
      converged,
      from: throttle.until,
      judge: (collected: Collected, base: PhaseBase) => {
        const gaps = retryGaps(collected.requests, retryAfterMs);
        const early = [...converged.values()].filter((t) => t !== null && t <= throttle.until);
        const slowest = base.convergeMs?.max ?? Number.POSITIVE_INFINITY;
        const soon = Object.values(gaps.tooSoon).reduce((a, b) => a + b, 0);
        const bySoon = Object.entries(gaps.tooSoon).map(([v, n]) => `${n} ${v}`);
        const minGap = gaps.minGapMs === null ? "-" : `${(gaps.minGapMs / 1000).toFixed(2)} s`;
        const targets: Target[] = [
          {
            what: `429 with Retry-After: ${c.retryAfterSeconds}: retries`,
            target: `none sooner than ${c.retryAfterSeconds} s`,
            figure: `${soon} of ${gaps.followed} sooner${bySoon.length > 0 ? ` (${bySoon.join(", ")})` : ""}; shortest wait ${minGap}`,
            met: soon === 0,
          },
          {
            what: "429 with Retry-After: converged after throttling ends",
            target: `within R + 2 s = ${c.retryAfterSeconds + 2} s`,
            figure:
              base.converged < base.replicas
                ? `${base.converged} of ${base.replicas} converged`
                : `slowest ${(slowest / 1000).toFixed(1)} s`,
            met: base.converged === base.replicas && slowest <= retryAfterMs + 2000,
          },
        ];
        return {
          facts: {
            "Retry-After (s)": c.retryAfterSeconds,
            "throttled share of lists and watches": c.throttleShare,
            "throttling (s)": c.throttleSeconds,
            "429s": gaps.throttled,
            "429s followed by a retry (same verb and stream)": gaps.followed,
            "shortest wait after a 429 before its retry (ms)": gaps.minGapMs,
            "shortest wait after a 429 before any request of that replica (ms)":
              gaps.minClientGapMs,
            "replicas converged before throttling ended": early.length,
          },
          targets,
        };
      },
    };
  });
}

/** Every watch ends as throttling starts; every replica must show a write made meanwhile. */
export function throttledResumes(ctx: FleetContext, phase: PhaseName): Promise<PhaseResult> {
  return throttled(ctx, phase, async () => {
    await ctx.api.call("endWatches", {});
    const marker = await ctx.api.call("touch", { app: 0 });
    return both(allReady(ctx.config.apps), secretAtLeast("app-0", marker.resourceVersion));
  });
}

/** A Registry edit adding Apps while throttling; afterwards (unmeasured) it is undone. */
export async function throttledRegistryEdit(
  ctx: FleetContext,
  phase: PhaseName,
): Promise<PhaseResult> {
  const { apps, added } = ctx.config;
  const result = await throttled(ctx, phase, async () => {
    await ctx.api.call("registry", { apps: apps + added, from: apps });
    return allReady(apps + added);
  });
  await ctx.api.call("registry", { apps, from: apps });
  await untilConverged(ctx.fleet.replicas(), allReady(apps), {
    timeoutMs: convergeTimeout(ctx.config),
  });
  return result;
}
