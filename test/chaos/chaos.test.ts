// A few pinned seeds of the chaos model check (`npm run chaos` runs any number of them).
import { describe, expect, it } from "vitest";
import { generate } from "./generate.ts";
import { runOps } from "./runner.ts";

const SEEDS = [7, 1009, 424242];
const STEPS = 60;

describe("every sidecar converges on the model whatever the API server does", () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}, ${STEPS} operations`, async () => {
      const { initial, ops } = generate(seed, STEPS);
      const result = await runOps(seed, initial, ops);
      const replay = `npm run chaos -- --seeds 1 --first-seed ${seed} --steps ${STEPS}`;
      expect(result.ok ? "ok" : `${result.failure}\nshrink and replay: ${replay}`).toBe("ok");
    }, 90_000);
  }
});
