import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { findTool } from "../support/tools.ts";
import { loadRules } from "./promql.ts";

const MONITORING = "manifests/overlays/monitoring";
const TESTS = `${MONITORING}/tests/alerts.test.yaml`;
const promtool = findTool(
  "prometheus",
  ["/usr/bin/promtool", "/usr/local/bin/promtool"],
  ["--version"],
);
const rules = loadRules();
const alertNames = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));

interface RuleTest {
  readonly name: string;
  readonly input_series: readonly { readonly series: string }[];
  readonly alert_rule_test: readonly {
    readonly alertname: string;
    readonly exp_alerts: readonly { readonly exp_labels: Record<string, string> }[];
  }[];
}

/** promtool's exit status and everything it printed (its failures go to stdout). */
function promtoolRun(args: readonly string[]): { status: number | null; output: string } {
  const run = spawnSync(promtool.path!, args, { encoding: "utf8", timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("manifests/overlays/monitoring alerts", () => {
  it("alert on what the README's operators need, each named once", () => {
    expect(alertNames).toEqual([
      "ReplicaMirrorNotSynced",
      "ReplicaMirrorApiServerContactStale",
      "ReplicaMirrorRegistryRefused",
      "ReplicaMirrorRebuildFailures",
      "ReplicaMirrorHostnameConflicts",
      "ReplicaMirrorSecretUnavailableRising",
      "ReplicaMirrorRegistryAppsRefused",
      "ReplicaMirrorRegistryDisagreement",
      "ReplicaMirrorProxyTableChanged",
      "ReplicaMirrorCertificateExpiring",
      "ReplicaMirrorCertificateRefused",
    ]);
  });

  it("ship the same groups as a PrometheusRule and as a plain rules file", () => {
    const rule = parse(readFileSync(`${MONITORING}/prometheusrule.yaml`, "utf8")) as {
      kind: string;
      spec: unknown;
    };
    expect(rule.kind).toBe("PrometheusRule");
    expect(rule.spec).toEqual(rules);
  });

  it("have, for each alert, a promtool case that fires and a series that does not", () => {
    const tests = (parse(readFileSync(TESTS, "utf8")) as { tests: RuleTest[] }).tests;
    for (const alert of alertNames) {
      const cases = tests.flatMap((t) =>
        t.alert_rule_test.filter((c) => c.alertname === alert).map((c) => ({ test: t, c })),
      );
      const firing = new Set(cases.flatMap(({ c }) => c.exp_alerts.map((a) => a.exp_labels.pod)));
      const pods = new Set(
        cases.flatMap(({ test }) =>
          test.input_series.map((s) => /pod="([^"]+)"/.exec(s.series)?.[1]),
        ),
      );
      expect(firing.size, `${alert} fires in no case`).toBeGreaterThan(0);
      const quiet = [...pods].filter((p) => !firing.has(p));
      const emptyCase = cases.some(({ c }) => c.exp_alerts.length === 0);
      expect(quiet.length > 0 || emptyCase, `${alert} has no case that stays quiet`).toBe(true);
    }
  });

  // Skipped only where promtool is missing; .ci/run installs it (Debian's prometheus package).

  it.skipIf(promtool.path === undefined)(
    `pass promtool check rules${promtool.path === undefined ? `, ${promtool.missing}` : ""}`,
    () => {
      const run = promtoolRun(["check", "rules", `${MONITORING}/rules.yaml`]);
      expect(run).toMatchObject({ status: 0 });
      expect(run.output).toContain(`SUCCESS: ${alertNames.length} rules found`);
    },
  );

  // Skipped only where promtool is missing; .ci/run installs it (Debian's prometheus package).

  it.skipIf(promtool.path === undefined)(
    `pass their unit tests with promtool test rules${promtool.path === undefined ? `, ${promtool.missing}` : ""}`,
    () => {
      const run = promtoolRun(["test", "rules", TESTS]);
      expect(run).toMatchObject({ status: 0 });
      expect(run.output).toContain("SUCCESS");
    },
  );
});
