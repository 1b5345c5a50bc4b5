// Scenario 3: the API server restarts and loses its watch history. Every watch is cut, new
// connections are refused while it is down, and every resume afterwards gets 410: the whole fleet
// relists. How closely those relists bunch up is what the API server feels.

import { isListStart, maxWindowShare, perWindow } from "../accounting.ts";
import { allReady, both, secretAtLeast, untilConverged } from "../converge.ts";
import { convergeTimeout, type FleetContext, measurePhase, type PhaseName } from "../phase.ts";
import type { PhaseResult } from "../results.ts";

/** Restarts the API server, then writes a marker every replica must show. */
export function apiRestart(ctx: FleetContext, phase: PhaseName): Promise<PhaseResult> {
  return measurePhase(ctx, phase, async () => {
    const restart = await ctx.api.call("restart", { downMs: ctx.config.restartDownMs });
    const marker = await ctx.api.call("touch", { app: 0 });
    const converged = await untilConverged(
      ctx.fleet.replicas(),
      both(allReady(ctx.config.apps), secretAtLeast("app-0", marker.resourceVersion)),
      { timeoutMs: convergeTimeout(ctx.config) },
    );
    return {
      converged,
      from: restart.downAt,
      judge: (collected) => {
        // Relists of the App Secrets, paged or streamed: the heavy ones (the Registry's relist is
        // one small object).
        const relists = collected.requests
          .filter((r) => isListStart(r) && !r.registry && r.time >= restart.downAt)
          .map((r) => r.time);
        // When each replica learnt it must relist: its resume's arrival, answered 410. A server
        // too busy to answer at once paces the relists that follow; these it cannot.
        const resumes = collected.requests
          .filter((r) => r.watchError === 410 && !r.registry)
          .map((r) => r.time);
        const share = maxWindowShare(relists);
        const windows = perWindow(relists, restart.upAt);
        const spanMs = relists.length > 0 ? Math.max(...relists) - Math.min(...relists) : 0;
        return {
          facts: {
            "down (ms)": restart.upAt - restart.downAt,
            "App Secret relists": relists.length,
            "largest share of relists in one second": share,
            "relists per second after the restart": windows.join(" "),
            "first to last relist (ms)": spanMs,
            "App Secret resumes answered 410": resumes.length,
            "largest share of those 410 resumes in one second": maxWindowShare(resumes),
          },
          targets: [
            {
              what: `API-server restart, ${ctx.fleet.size} replicas: relists in any one-second window`,
              // ADR 61: a 5 s spread, which a simulation puts at 38% (95th percentile, 50 replicas).
              target: "≤ 40% of the fleet's relists",
              figure: `${(share * 100).toFixed(0)}% (${Math.round(share * relists.length)} of ${relists.length})`,
              met: share <= 0.4,
            },
          ],
        };
      },
    };
  });
}
