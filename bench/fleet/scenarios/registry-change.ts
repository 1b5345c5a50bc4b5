// Scenario 4: a Registry edit that adds Apps (whose Secrets exist but were not referenced), and the
// edit that removes them again. What each replica fetches for the added Apps is compared with the
// JSON of their Secrets: the least any replica must receive.

import { isListStart } from "../accounting.ts";
import { allReady, untilConverged } from "../converge.ts";
import { convergeTimeout, type FleetContext, measurePhase, type PhaseName } from "../phase.ts";
import type { PhaseResult } from "../results.ts";

/** The Registry grows from `apps` to `apps + added` Apps. */
export function registryAdd(ctx: FleetContext, phase: PhaseName): Promise<PhaseResult> {
  const { apps, added } = ctx.config;
  return measurePhase(ctx, phase, async () => {
    const written = await ctx.api.call("registry", { apps: apps + added, from: apps });
    const converged = await untilConverged(ctx.fleet.replicas(), allReady(apps + added), {
      timeoutMs: convergeTimeout(ctx.config),
    });
    return {
      converged,
      from: written.now,
      judge: (collected, base) => {
        // Lists of App Secrets that select no single name, paged or streamed: what "a list of
        // all Secrets" means here.
        const secretLists = new Map<string, { lists: number; objects: number }>();
        for (const r of collected.requests) {
          if ((r.verb !== "list" && !r.streamedList) || r.registry || r.byName) continue;
          const seen = secretLists.get(r.client) ?? { lists: 0, objects: 0 };
          secretLists.set(r.client, {
            lists: seen.lists + (isListStart(r) ? 1 : 0),
            objects: seen.objects + r.objects,
          });
        }
        const maxListed = Math.max(0, ...[...secretLists.values()].map((l) => l.objects));
        const maxLists = Math.max(0, ...[...secretLists.values()].map((l) => l.lists));
        const budget = written.appSecretsBytes;
        const ratio = base.perReplica.bytes.max / budget;
        const listers = base.fleet.secretListStarts;
        return {
          facts: {
            "JSON of the added Apps' Secrets (bytes)": budget,
            "the Registry Secret's own event (bytes)": written.registryBytes,
            "received per replica ÷ JSON of the added Secrets, median (×)":
              base.perReplica.bytes.median / budget,
            "received per replica ÷ JSON of the added Secrets, max (×)": ratio,
            "App Secrets listed by the busiest replica": maxListed,
            "Secrets fetched by a name-selected list, fleet": base.fleet.namedListStarts ?? 0,
          },
          targets: [
            {
              what: `Registry +${added} Apps, lists of the App Secrets (not selecting one name) per replica`,
              target: "none",
              figure: `${maxLists} list(s), ${maxListed} Secrets (busiest replica; ${listers} in the fleet)`,
              met: listers === 0,
            },
            {
              what: `Registry +${added} Apps, bytes received per replica`,
              target: "≤ 1.2× the JSON of those Secrets",
              figure: `${ratio.toFixed(2)}× (${(base.perReplica.bytes.max / 2 ** 20).toFixed(2)} MiB for ${(budget / 2 ** 20).toFixed(2)} MiB)`,
              met: ratio <= 1.2,
            },
          ],
        };
      },
    };
  });
}

/** The Registry shrinks back to `apps` Apps. */
export function registryRemove(ctx: FleetContext, phase: PhaseName): Promise<PhaseResult> {
  const { apps } = ctx.config;
  return measurePhase(ctx, phase, async () => {
    const written = await ctx.api.call("registry", { apps, from: apps });
    const converged = await untilConverged(ctx.fleet.replicas(), allReady(apps), {
      timeoutMs: convergeTimeout(ctx.config),
    });
    return {
      converged,
      from: written.now,
      judge: () => ({
        facts: { "the Registry Secret's own event (bytes)": written.registryBytes },
      }),
    };
  });
}
