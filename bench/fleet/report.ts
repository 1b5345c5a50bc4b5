// The fleet's tables and targets (bench/results/fleet.md): per scenario, one table per phase
// with a column per label asked for, so two runs read across a row. Built from the result files only.

import { extrapolation } from "./extrapolate.ts";
import { bytes, fact, num, pct, secs, spreadOf } from "./format.ts";
import { SCENARIOS, type Scenario } from "./options.ts";
import { type PhaseResult, RESULTS_DIR, readResult, type ScenarioResult } from "./results.ts";

const TITLES: Record<Scenario, string> = {
  memory: "Memory of one replica during its initial list",
  watchlist: "Cold start and rolling restart: streaming lists, and the WatchList feature gate off",
  start: "Cold start and rolling restart",
  steady: "Steady state with churn",
  registry: "Registry edits",
  restart: "API-server restart losing the watch history",
  throttle: "Throttling: 429 with Retry-After",
};

type Rows = [string, string][];

function verbs(p: PhaseResult): string {
  const v = p.fleet.byVerb;
  const main = `${num(v.list ?? 0)} / ${num(v.watch ?? 0)} / ${num(v.get ?? 0)}`;
  const other = Object.entries(v).filter(([k]) => !["list", "watch", "get"].includes(k));
  return other.length === 0 ? main : `${main} (+ ${other.map(([k, n]) => `${n} ${k}`).join(", ")})`;
}

/** The rows of one phase, common figures first, then the scenario's own, then the targets. */
export function phaseRows(p: PhaseResult): Rows {
  const f = p.fleet;
  const r = p.perReplica;
  const reads = ["consistent", "cache", "exact"].map((k) => num(f.listReads[k] ?? 0)).join(" / ");
  const rows: Rows = [
    ["replicas that reached the expected state", `${p.converged} of ${p.replicas}`],
    ["time to get there per replica, min / median / max", spreadOf(p.convergeMs, secs)],
    ["requests, fleet: list / watch / get", verbs(p)],
    ["list requests (pages) per replica, min / median / max", spreadOf(r.listPages)],
    [
      "lists started per replica (each list or relist once, paged or streamed)",
      spreadOf(r.listStarts),
    ],
    ["list pages read consistently / from the cache / at an exact version", reads],
    [
      "objects sent, fleet; per replica min / median / max",
      `${num(f.objects)}; ${spreadOf(r.objects)}`,
    ],
    [
      "bytes sent, fleet; per replica min / median / max",
      `${bytes(f.bytes)}; ${spreadOf(r.bytes, bytes)}`,
    ],
    ["watches opened, fleet", num(f.watches)],
    [
      "of which streaming lists / refused (422, the WatchList feature gate off), fleet",
      `${num(f.streamedLists)} / ${num(f.refusedStreams)}`,
    ],
    [
      "410 / 429 / 5xx answers, and connections closed unanswered, fleet",
      `${num(f.expired)} / ${num(f.throttled)} / ${num(f.serverErrors)}, ${num(f.unanswered)}`,
    ],
    [
      "peak lists in progress (first page to last) / list pages being answered at once",
      `${num(f.peakListsInProgress)} / ${num(f.peakListsInFlight)}`,
    ],
    [
      "API server: event loop busy, CPU",
      `${pct(p.apiServer.eventLoopBusy)}, ${secs(p.apiServer.cpuMs)} over ${secs(p.durationMs)}`,
    ],
    ...(p.apiServer.rssPeakMiB === undefined
      ? []
      : [
          [
            "API server: RSS before / peak, and its growth per replica",
            `${num(p.apiServer.rssBeforeMiB ?? 0, 0)} / ${num(p.apiServer.rssPeakMiB, 0)} MiB, ${num(p.apiServer.peakPerReplicaKiB ?? 0, 0)} KiB`,
          ] as [string, string],
        ]),
    ["machine load average (1 min) at the end", num(p.loadAverage, 1)],
  ];
  for (const [name, v] of Object.entries(p.facts)) rows.push([name, fact(name, v)]);
  for (const t of p.targets)
    rows.push([
      `**target**: ${t.what} (${t.target})`,
      `${t.figure}: **${t.met ? "met" : "not met"}**`,
    ]);
  return rows;
}

function memoryRows(s: ScenarioResult): Rows {
  const m = s.memory;
  if (m === undefined) return [];
  return [
    ["Secrets in the cluster", num(m.secrets)],
    ["spawn to every App ready", secs(m.syncMs)],
    ["peak RSS (VmHWM, and samples every 50 ms)", bytes(m.peakRssBytes)],
    ["RSS after sync, idle 15 s", bytes(m.rssIdleBytes)],
    [
      "RSS / heap held after sync (collections that release free pages)",
      `${bytes(m.rssAfterSyncBytes)} / ${bytes(m.heapAfterSyncBytes)}`,
    ],
    ...m.targets.map((t): [string, string] => [
      `**target**: ${t.what} (${t.target})`,
      `${t.figure}: **${t.met ? "met" : "not met"}**`,
    ]),
  ];
}

/** What a label's run was: the commit, when, where, and the sizes it ran with. */
function runLine(r: ScenarioResult, scenarios: readonly string[]): string {
  const c = r.config;
  const n = (k: string) => num(Number(c[k]));
  return (
    `- **${r.label}** (${scenarios.join(", ")}): commit ${r.commit}, started ${r.startedAt}; ` +
    `${r.machine}. ` +
    `${n("replicas")} replicas, ${n("apps")} Apps (+${n("added")}), ${n("secrets")} Secrets of ` +
    `${bytes(Number(c.valueBytes))}; steady state ${n("steadySeconds")} s with ` +
    `${n("referencedWritesPerSecond")} + ${n("unrelatedWritesPerSecond")} writes/s (referenced + ` +
    `unrelated); restart down ${secs(Number(c.restartDownMs))}; throttling ${n("throttleSeconds")} s ` +
    `at ${pct(Number(c.throttleShare))} with Retry-After ${n("retryAfterSeconds")} s.`
  );
}

/** A markdown table with one column per label; a row missing from a label shows "–". */
function table(labels: readonly string[], byLabel: ReadonlyMap<string, Rows>): string {
  const names: string[] = [];
  for (const rows of byLabel.values())
    for (const [n] of rows) if (!names.includes(n)) names.push(n);
  const cols = labels.filter((l) => byLabel.has(l));
  const lines = [`| | ${cols.join(" | ")} |`, `|---|${cols.map(() => "---").join("|")}|`];
  for (const n of names) {
    const cells = cols.map((l) => byLabel.get(l)?.find(([k]) => k === n)?.[1] ?? "–");
    lines.push(`| ${n} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

/**
 * The phases of each label in one table, a column each (`label: phase` when there are several
 * labels), so a start with streaming lists reads across from one with the gate off.
 */
function sideBySide(byLabel: ReadonlyMap<string, ScenarioResult>): string {
  const columns = new Map<string, Rows>();
  for (const [label, r] of byLabel)
    for (const p of r.phases)
      columns.set(byLabel.size === 1 ? p.name : `${label}: ${p.name}`, phaseRows(p));
  return table([...columns.keys()], columns);
}

/** Loads every scenario's results for the labels that exist. */
export async function loadResults(
  labels: readonly string[],
  dir = RESULTS_DIR,
): Promise<Map<Scenario, Map<string, ScenarioResult>>> {
  const all = new Map<Scenario, Map<string, ScenarioResult>>();
  for (const scenario of SCENARIOS) {
    const byLabel = new Map<string, ScenarioResult>();
    for (const label of labels) {
      const r = await readResult(scenario, label, dir);
      if (r !== undefined) byLabel.set(label, r);
    }
    if (byLabel.size > 0) all.set(scenario, byLabel);
  }
  return all;
}

/** Every target of every phase of `label`'s results in one table: what BENCHMARKS.md shows. */
export async function renderTargets(label: string, dir = RESULTS_DIR): Promise<string> {
  const all = await loadResults([label], dir);
  const lines = ["| phase | target | figure | met |", "|---|---|---|---|"];
  for (const byLabel of all.values()) {
    const r = byLabel.get(label);
    if (r === undefined) continue;
    const rows = [
      ...(r.memory?.targets ?? []).map((t) => ({ phase: "initial list, one replica", t })),
      ...r.phases.flatMap((p) => p.targets.map((t) => ({ phase: p.name, t }))),
    ];
    for (const { phase, t } of rows)
      lines.push(
        `| ${phase} | ${t.what} (${t.target}) | ${t.figure} | ${t.met ? "yes" : "**no**"} |`,
      );
  }
  return `${lines.join("\n")}\n`;
}

/** The tables of every scenario with results for any of `labels`, and the 500-replica note. */
export async function renderReport(labels: readonly string[], dir = RESULTS_DIR): Promise<string> {
  const all = await loadResults(labels, dir);
  const out: string[] = [];
  const runs = new Map<string, { r: ScenarioResult; scenarios: string[] }>();
  for (const [scenario, byLabel] of all)
    for (const [l, r] of byLabel) {
      const run = runs.get(`${l} ${r.startedAt}`) ?? { r, scenarios: [] };
      run.scenarios.push(scenario);
      runs.set(`${l} ${r.startedAt}`, run);
    }
  for (const { r, scenarios } of runs.values()) out.push(runLine(r, scenarios));
  for (const [scenario, byLabel] of all) {
    out.push(`\n### ${TITLES[scenario]}\n`);
    if (scenario === "memory") {
      out.push(table(labels, new Map([...byLabel].map(([l, r]) => [l, memoryRows(r)]))));
      out.push(`\n![RSS of one replica during its initial list](docs/charts/fleet-memory.svg)`);
      continue;
    }
    if (scenario === "watchlist") {
      out.push(sideBySide(byLabel));
      continue;
    }
    const keys: string[] = [];
    for (const r of byLabel.values())
      for (const p of r.phases) if (!keys.includes(p.key)) keys.push(p.key);
    for (const key of keys) {
      const phases = new Map<string, PhaseResult>();
      for (const [l, r] of byLabel) {
        const p = r.phases.find((x) => x.key === key);
        if (p !== undefined) phases.set(l, p);
      }
      const first = [...phases.values()][0];
      if (first === undefined) continue;
      out.push(`\n#### ${first.name}\n`);
      out.push(table(labels, new Map([...phases].map(([l, p]) => [l, phaseRows(p)]))));
      out.push(`\n![API requests per second: ${first.name}](docs/charts/fleet-${key}.svg)`);
    }
  }
  const note = extrapolation(all, labels);
  if (note !== "") out.push(`\n${note}`);
  return `${out.join("\n")}\n`;
}
