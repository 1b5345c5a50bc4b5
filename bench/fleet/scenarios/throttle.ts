// Scenario 5: the API server sheds load. For a while it answers a share of lists and watches with
// 429 and a Retry-After, as API Priority and Fairness does, while every replica has to resume its
// watches and relist (the history is discarded as throttling starts). A replica must never come
// back sooner than the server asked, and must catch up promptly once it stops.

import { retryGaps } from "../accounting.ts";
import { allReady, both, secretAtLeast, untilConverged } from "../converge.ts";
import { convergeTimeout, type FleetContext, measurePhase, type PhaseName } from "../phase.ts";
import type { PhaseResult } from "../results.ts";

/** Throttling for `throttleSeconds`; convergence is measured from its end. */
export function throttling(ctx: FleetContext, phase: PhaseName): Promise<PhaseResult> {
  const c = ctx.config;
  const retryAfterMs = c.retryAfterSeconds * 1000;
  return measurePhase(ctx, phase, async () => {
    const throttle = await ctx.api.call("throttle", {
      share: c.throttleShare,
      retryAfterSeconds: c.retryAfterSeconds,
      forMs: c.throttleSeconds * 1000,
      seed: 1,
    });
    await ctx.api.call("expire", {});
    const marker = await ctx.api.call("touch", { app: 0 });
    const converged = await untilConverged(
      ctx.fleet.replicas(),
      both(allReady(c.apps), secretAtLeast("app-0", marker.resourceVersion)),
      { timeoutMs: c.throttleSeconds * 1000 + convergeTimeout(c) },
    );
    await ctx.api.call("reset", {});
    return {
      converged,
      from: throttle.until,
      judge: (collected, base) => {
        const gaps = retryGaps(collected.requests, retryAfterMs);
        const early = [...converged.values()].filter((t) => t !== null && t <= throttle.until);
        const slowest = base.convergeMs?.max ?? Number.POSITIVE_INFINITY;
        const minGap = gaps.minStreamGapMs;
        return {
          facts: {
            "Retry-After (s)": c.retryAfterSeconds,
            "throttled share": c.throttleShare,
            "throttling (s)": c.throttleSeconds,
            "429s": gaps.throttled,
            "429s followed by a retry on the same stream": gaps.followed,
            "retries sooner than Retry-After": gaps.tooSoon,
            "shortest wait after a 429, same stream (ms)": minGap,
            "shortest wait after a 429, any request of that replica (ms)": gaps.minClientGapMs,
            "replicas converged before throttling ended": early.length,
          },
          targets: [
            {
              what: `429 with Retry-After: ${c.retryAfterSeconds}: retries`,
              target: `none sooner than ${c.retryAfterSeconds} s`,
              figure: `${gaps.tooSoon} of ${gaps.followed} sooner; shortest wait ${minGap === null ? "-" : `${(minGap / 1000).toFixed(2)} s`}`,
              met: gaps.tooSoon === 0,
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
          ],
        };
      },
    };
  });
}
