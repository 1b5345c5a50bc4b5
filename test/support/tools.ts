// Programs some tests run that npm does not install: Debian's nginx, caddy, haproxy and promtool
// (package prometheus). `.ci/run` installs them; a developer's machine may lack them.

import { execFileSync } from "node:child_process";

/** A program a test needs, by the Debian package that ships it. */
export interface Tool {
  /** Its path, or undefined when none of the candidates runs here. */
  readonly path: string | undefined;
  /** Why the tests that need it are skipped, when `path` is undefined. */
  readonly missing: string;
}

/**
 * The first of `candidates` that runs with `args` (a version flag). Missing on a developer's
 * machine, the tests that need it skip with `missing` in their title; missing in CI (`CI` set),
 * this throws, as `.ci/run` installs it.
 */
export function findTool(
  debianPackage: string,
  candidates: readonly string[],
  args: readonly string[],
): Tool {
  const path = candidates.find((candidate) => {
    try {
      execFileSync(candidate, args, { stdio: "ignore", timeout: 10_000 });
      return true;
    } catch {
      return false;
    }
  });
  const missing = `skipped: ${debianPackage} is not installed (.ci/run installs Debian's ${debianPackage})`;
  if (path === undefined) {
    if (process.env.CI)
      throw new Error(`${debianPackage} is not installed, and CI must run its tests`);
    console.warn(`tests that need ${debianPackage} are ${missing}`);
  }
  return { path, missing };
}
