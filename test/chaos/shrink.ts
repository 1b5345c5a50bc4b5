/**
 * Shrinking by prefixes: the shortest prefix of a failing operation list that still fails.
 * Bisection first (assuming longer prefixes fail more), then a linear scan down from there
 * until two prefixes in a row pass;
 * a prefix counts as failing when any of `attempts` runs fails, since timing varies.
 */
import type { Op } from "./ops.ts";
import { runOps } from "./runner.ts";

export async function shrink(
  seed: number,
  initial: readonly Op[],
  failing: readonly Op[],
  log: (line: string) => void,
  attempts = 2,
): Promise<Op[]> {
  const fails = async (n: number): Promise<boolean> => {
    for (let i = 0; i < attempts; i++) {
      const r = await runOps(seed, initial, failing.slice(0, n));
      if (!r.ok) {
        log(`prefix ${n}: fails (${r.failure?.split("\n")[0]})`);
        return true;
      }
    }
    log(`prefix ${n}: passes`);
    return false;
  };
  let lo = 0; // not known to fail
  let hi = failing.length; // known to fail
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (await fails(mid)) hi = mid;
    else lo = mid;
  }
  // Bisection assumes monotony; a shorter prefix may still fail below a passing one. Scan down
  // while prefixes fail, and a little past the first that passes.
  for (let n = hi - 1, passes = 0; n >= 0 && passes < 2; n--) {
    if (await fails(n)) {
      hi = n;
      passes = 0;
    } else passes += 1;
  }
  return failing.slice(0, hi);
}
