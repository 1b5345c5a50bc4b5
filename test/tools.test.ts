import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { findTool } from "./support/tools.ts";

// The proxies' and promtool's suites find their program with findTool: CI must run them, so a
// program missing there fails the suite; on a developer's machine it skips, saying why.
const ABSENT = ["/nonexistent/replica-mirror-no-such-tool"];

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe("a program the tests need", () => {
  it("missing in CI, fails the suite that needs it", () => {
    vi.stubEnv("CI", "true");
    expect(() => findTool("nothing", ABSENT, ["-v"])).toThrow(
      "nothing is not installed, and CI must run its tests",
    );
  });

  it("missing elsewhere, skips its tests with the reason in their title", () => {
    vi.stubEnv("CI", "");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(findTool("nothing", ABSENT, ["-v"])).toEqual({
      path: undefined,
      missing: "skipped: nothing is not installed (.ci/run installs Debian's nothing)",
    });
    expect(warn).toHaveBeenCalledOnce();
  });

  it("is looked for as in CI by .ci/run, whatever the CI system sets", () => {
    expect(readFileSync(".ci/run", "utf8")).toMatch(/^export CI="\$\{CI:-true\}"$/m);
  });
});
