// Reading the PromQL that ships in manifests/overlays/monitoring: the dashboard's and the alerts'
// expressions, the metric names they query, and the names a /metrics page exposes.

import { readFileSync } from "node:fs";
import { parse } from "yaml";

const MONITORING = "manifests/overlays/monitoring";

interface Panel {
  readonly title?: string;
  readonly targets?: readonly { readonly expr?: string }[];
  readonly panels?: readonly Panel[];
}

interface Dashboard {
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { readonly query?: unknown }[] };
}

/** An alerting rule as a rules file holds it. */
interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly [key: string]: unknown;
}

/** The rule groups of a plain Prometheus rules file. */
interface RuleGroups {
  readonly groups: readonly { readonly name: string; readonly rules: readonly AlertRule[] }[];
}

/** The parsed dashboard.json. */
export function loadDashboard(): Dashboard {
  return JSON.parse(readFileSync(`${MONITORING}/dashboard.json`, "utf8")) as Dashboard;
}

/** The parsed rules.yaml. */
export function loadRules(): RuleGroups {
  return parse(readFileSync(`${MONITORING}/rules.yaml`, "utf8")) as RuleGroups;
}

/** Every PromQL expression of the dashboard's panels (rows included), by panel title. */
export function dashboardExpressions(dashboard: Dashboard): { panel: string; expr: string }[] {
  const out: { panel: string; expr: string }[] = [];
  const walk = (panels: readonly Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (target.expr !== undefined) out.push({ panel: panel.title ?? "", expr: target.expr });
      }
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels);
  return out;
}

/** The series selectors of the template variables' `label_values(selector, label)` queries. */
export function variableSelectors(dashboard: Dashboard): string[] {
  return dashboard.templating.list.flatMap((variable) => {
    const query = variable.query as string | { query?: string } | undefined;
    const text = typeof query === "string" ? query : query?.query;
    const selector = /^label_values\((.*),\s*[a-zA-Z_]\w*\)$/.exec(text ?? "")?.[1];
    return selector === undefined ? [] : [selector];
  });
}

/** Grafana's variables replaced by values Prometheus parses. */
export function withoutGrafanaVariables(expr: string): string {
  return expr.replaceAll("$__rate_interval", "5m").replace(/\$[a-z_]+/g, ".*");
}

const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "offset",
  "inf",
  "nan",
]);

/** The metric names an expression queries: identifiers that are no function, keyword or label. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w.])[a-zA-Z_:][\w:]*/g)) {
    const word = match[0];
    const next = bare.slice((match.index ?? 0) + word.length).trimStart();
    if (next.startsWith("(") || KEYWORDS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names].sort();
}

/** The sample names a Prometheus text page exposes, from its TYPE lines (histograms as their series). */
export function exposedNames(metricsText: string): Set<string> {
  const names = new Set<string>();
  for (const line of metricsText.split("\n")) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (m === null) continue;
    const [, name, type] = m as unknown as [string, string, string];
    if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(name + s);
    else if (type === "summary") for (const s of ["", "_sum", "_count"]) names.add(name + s);
    else names.add(name);
  }
  return names;
}
