import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envName, FLAG_NAMES, FLAGS } from "../src/cli/flags.ts";
import { createMetrics } from "../src/ops/metrics.ts";
import { createPushMetrics } from "../src/ops/push-metrics.ts";

const readme = readFileSync("README.md", "utf8");
const configTable = readme.slice(
  readme.indexOf("## Configuration"),
  readme.indexOf("## The Registry document"),
);

describe("README", () => {
  it.each(FLAG_NAMES)("documents --%s with its variable in the configuration table", (name) => {
    const row = configTable
      .split("\n")
      .find((l) => l.startsWith(`| \`--${name} ${FLAGS[name].value}\``));
    expect(row, `no row for --${name}`).toBeDefined();
    expect(row).toContain(`\`${envName(name)}\``);
  });

  it("documents every replica_mirror_ metric the sidecar exports in docs/operating.md", async () => {
    const operating = readFileSync("docs/operating.md", "utf8");
    const metrics = createMetrics();
    createPushMetrics(metrics.registry);
    const names = (await metrics.registry.getMetricsAsJSON())
      .map((m) => m.name)
      .filter((n) => n.startsWith("replica_mirror_"));
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) expect(operating, name).toContain(`\`${name}`);
  });

  it("stays a page a newcomer reads: README under 15 KB, BENCHMARKS.md under 30 KB", () => {
    expect(Buffer.byteLength(readme)).toBeLessThan(15 * 1024);
    expect(readFileSync("BENCHMARKS.md").byteLength).toBeLessThan(30 * 1024);
  });

  it("names the two commands a newcomer runs", () => {
    expect(readme).toContain("npm ci && npm run demo");
    expect(readme).toContain("npm ci && npm test");
    expect(readFileSync(".ci/run", "utf8")).toMatch(/^npm ci\nnpm test$/m);
  });
});
