import { defineConfig } from "vitest/config";

// REPLICA_MIRROR_LONG=1 runs the fuzz and hygiene tests at full size (test/support/wait.ts):
// tens of thousands of generated cases, minutes for one test.
const LONG = process.env.REPLICA_MIRROR_LONG === "1";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    testTimeout: LONG ? 20 * 60_000 : 30_000,
    hookTimeout: 30_000,
    // Integration tests start servers and child processes; two cores do not gain from more.
    maxWorkers: 2,
  },
});
