// What a 500-replica fleet would cost the API server, scaled from the measured per-replica means.

import { bytes, num } from "./format.ts";
import type { Scenario } from "./options.ts";
import type { PhaseResult, ScenarioResult } from "./results.ts";

export const TARGET_FLEET = 500;

type All = ReadonlyMap<Scenario, ReadonlyMap<string, ScenarioResult>>;

function phase(all: All, scenario: Scenario, label: string, key: string): PhaseResult | undefined {
  return all
    .get(scenario)
    ?.get(label)
    ?.phases.find((p) => p.key === key);
}

/** Fleet total over the measured replicas, times TARGET_FLEET. */
const scaled = (p: PhaseResult, total: number) => (total / p.replicas) * TARGET_FLEET;

/** The steady-state rate: requests as measured, or as the watch timeouts imply when more. */
function hourly(p: PhaseResult | undefined): string | undefined {
  if (p === undefined) return undefined;
  const h = 3_600_000 / p.durationMs;
  const renewals = Number(p.facts["requests per replica per hour, from watch timeouts"] ?? 0);
  const requests = Math.max(scaled(p, p.fleet.requests) * h, renewals * TARGET_FLEET);
  return `${num(requests)} requests, ${num(scaled(p, p.fleet.objects) * h)} objects, ${bytes(scaled(p, p.fleet.bytes) * h)}`;
}

function once(p: PhaseResult | undefined): string | undefined {
  if (p === undefined) return undefined;
  return `${num(scaled(p, p.fleet.requests))} requests, ${num(scaled(p, p.fleet.objects))} objects, ${bytes(scaled(p, p.fleet.bytes))}`;
}

/** The markdown note: a table of costs per label, and how they were derived. */
export function extrapolation(all: All, labels: readonly string[]): string {
  const rows: [string, (label: string) => string | undefined][] = [
    [
      "per hour, steady state, one cluster-wide watch",
      (l) => hourly(phase(all, "steady", l, "steady")),
    ],
    [
      "per hour, steady state, `--secret-selector`",
      (l) => hourly(phase(all, "steady", l, "steady-selector")),
    ],
    ["per Registry edit adding Apps", (l) => once(phase(all, "registry", l, "registry-add"))],
    [
      "per Registry edit adding Apps, `--secret-selector`",
      (l) => once(phase(all, "registry", l, "registry-add-selector")),
    ],
    ["per Registry edit removing them", (l) => once(phase(all, "registry", l, "registry-remove"))],
    [
      "per rollout (every replica restarted once)",
      (l) => once(phase(all, "start", l, "rolling-restart")),
    ],
    ["per API-server restart", (l) => once(phase(all, "restart", l, "api-restart"))],
  ];
  const cols = labels.filter((l) => rows.some(([, f]) => f(l) !== undefined));
  if (cols.length === 0) return "";
  const any = [...all.values()].flatMap((m) => [...m.values()])[0];
  const measured =
    any === undefined
      ? ""
      : ` (measured with ${any.config.replicas} replicas and ${num(Number(any.config.secrets))} Secrets)`;
  const lines = [
    `#### What ${TARGET_FLEET} replicas would cost the API server${measured}`,
    "",
    `| | ${cols.join(" | ")} |`,
    `|---|${cols.map(() => "---").join("|")}|`,
    ...rows
      .filter(([, f]) => cols.some((l) => f(l) !== undefined))
      .map(([name, f]) => `| ${name} | ${cols.map((l) => f(l) ?? "–").join(" | ")} |`),
    "",
    `How: each figure is the phase's fleet total divided by the replicas measured, times ${TARGET_FLEET}; ` +
      "per-hour figures scale the steady-state window to an hour, and count at least the watch " +
      "renewals the watches' own timeoutSeconds imply (a window shorter than the watch timeout " +
      "may hold none). Replicas share nothing on the " +
      "client side, so the API server sends each one the same lists, events and objects: the " +
      "cost is linear in the fleet's size. What does not scale linearly is not in these figures: " +
      "the lists a larger fleet has in flight at once, the API server's queueing (API Priority " +
      "and Fairness) and etcd's own load. Steady-state bytes are linear in the cluster's write " +
      "rate too (the churn is in the steady-state table).",
  ];
  return lines.join("\n");
}
