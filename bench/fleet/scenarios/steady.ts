// Scenario 2: steady state. Other software writes Secrets all day and the referenced App Secrets
// change now and then; nothing else happens. What a replica costs the API server per hour is the
// window's requests scaled to an hour, and the watches its reflectors must renew.

import { perHour } from "../accounting.ts";
import { secretAtLeast, untilConverged } from "../converge.ts";
import { convergeTimeout, type FleetContext, measurePhase, type PhaseName } from "../phase.ts";
import type { PhaseResult } from "../results.ts";

/** The server-side watch timeout the manifest gives (`--watch-timeout`), in seconds. */
const MANIFEST_WATCH_TIMEOUT = 300;

/** Churn for `steadySeconds`, then one marker write every replica must show. */
export function steadyState(ctx: FleetContext, phase: PhaseName): Promise<PhaseResult> {
  const c = ctx.config;
  return measurePhase(ctx, phase, async () => {
    const durationMs = c.steadySeconds * 1000;
    const churn = await ctx.api.call(
      "churn",
      {
        referencedPerSecond: c.referencedWritesPerSecond,
        unrelatedPerSecond: c.unrelatedWritesPerSecond,
        durationMs,
      },
      durationMs + 60_000,
    );
    const marker = await ctx.api.call("touch", { app: 0 });
    const converged = await untilConverged(
      ctx.fleet.replicas(),
      secretAtLeast("app-0", marker.resourceVersion),
      { timeoutMs: convergeTimeout(ctx.config) },
    );
    return {
      converged,
      from: marker.now,
      judge: (_, base) => {
        const n = base.replicas;
        const window = base.durationMs;
        // The watches open now were mostly opened in earlier phases: their timeouts are the
        // fleet's (measurePhase has added this phase's too).
        const timeouts = ctx.watchTimeouts;
        // client-go style: each watch asks for T..2T, so a reflector renews every 1.5 T on average.
        const meanTimeout =
          timeouts.length > 0
            ? timeouts.reduce((a, b) => a + b, 0) / timeouts.length
            : 1.5 * MANIFEST_WATCH_TIMEOUT;
        // Two reflectors per replica: the Registry's and the one cluster-wide App Secret watch.
        const streamsPerReplica = 2;
        const meanPerHour = perHour(base.fleet.requests / n, window);
        const maxPerHour = perHour(base.perReplica.requests.max, window);
        const model = (streamsPerReplica * 3600) / meanTimeout;
        return {
          facts: {
            "window (s)": Math.round(window / 1000),
            "referenced writes": churn.referenced,
            "unrelated writes": churn.unrelated,
            "requests per replica per hour, fleet mean": meanPerHour,
            "requests per replica per hour, busiest replica": maxPerHour,
            "requests per replica per hour, from watch timeouts": model,
            "mean watch timeoutSeconds asked": meanTimeout,
            "watch events per replica per hour": perHour(base.fleet.objects / n, window),
            "bytes per replica per hour": perHour(base.fleet.bytes / n, window),
          },
          targets: [
            {
              what: "steady state, lists per replica",
              target: "0",
              figure: `${base.perReplica.listStarts.max} (busiest replica)`,
              met: base.perReplica.listStarts.max === 0,
            },
            {
              what: "steady state, requests per replica per hour",
              target: "≤ 30",
              figure: `${meanPerHour.toFixed(1)} (fleet mean; busiest ${maxPerHour.toFixed(0)}; watch renewals alone ${model.toFixed(1)})`,
              met: meanPerHour <= 30 && model <= 30,
            },
          ],
        };
      },
    };
  });
}
