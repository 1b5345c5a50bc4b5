/**
 * A sidecar's whole world at a quiescent point, compared with the worlds the model allows: its
 * Snapshot summary, its App records and each probe's route answer.
 */
import type { Expected } from "./check.ts";
import type { World } from "./judge.ts";
import { answerKey, type Probe, routeAnswer } from "./route-answer.ts";

/**
 * At a quiescent point: the first of `worlds` a sidecar's whole world equals, or how it differs
 * from the first (the expected) one. `routeKey` asks the sidecar about a probe.
 */
export async function converged(
  world: World,
  worlds: readonly Expected[],
  routeKey: (probe: Probe) => Promise<{ headers: Record<string, string>; actual: string }>,
  probes: readonly Probe[],
): Promise<Expected | string> {
  const body = world.snapshot;
  const summary = {
    apps: body.apps,
    readyApps: body.readyApps,
    hostnames: body.hostnames,
    registry: {
      present: body.registry?.present,
      resourceVersion: body.registry?.resourceVersion,
      rejected: body.registry?.error !== null,
    },
    conflicts: body.conflicts,
  };
  let diff: string | undefined;
  for (const expected of worlds) {
    const parts: string[] = [];
    if (JSON.stringify(summary) !== JSON.stringify(expected.summary))
      parts.push(
        `/v1/snapshot ${JSON.stringify(summary)}, expected ${JSON.stringify(expected.summary)}`,
      );
    if (JSON.stringify(world.apps) !== JSON.stringify(expected.apps))
      parts.push(
        `/v1/apps ${JSON.stringify(world.apps)}, expected ${JSON.stringify(expected.apps)}`,
      );
    const d =
      parts.length > 0 ? parts.join("\n    ") : await routeMismatch(expected, routeKey, probes);
    if (d === null) return expected;
    diff ??= d;
  }
  return diff ?? "no world to compare with";
}

/** The first probe a converged world answers otherwise than expected, or null. */
async function routeMismatch(
  expected: Expected,
  routeKey: (probe: Probe) => Promise<{ headers: Record<string, string>; actual: string }>,
  probes: readonly Probe[],
): Promise<string | null> {
  for (const probe of probes) {
    const { headers, actual } = await routeKey(probe);
    const want = answerKey(routeAnswer(expected.served, probe, expected.state));
    if (actual !== want)
      return `route ${JSON.stringify(headers)} answered "${actual}", expected "${want}"`;
  }
  return null;
}
