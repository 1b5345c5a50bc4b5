// Before the first timed write: the replica, and the API server that served its initial list, have
// finished starting. A start leaves work behind it for seconds at 100k Apps (the collection after
// start and V8's sweeping behind it, the route table's Secret index, the first verification of a
// pushed table, ADRs 80 and 81; the API server's collections after a list of 100k Secrets), and on
// two cores a write timed then pays for the start, not for the change. The start is timed by its
// own suites; these phases time a running replica.

/** At least this long after the table landed, as before these waits were measured. */
export const AFTER_START_MS = 2_000;
/** Quiet: the processes used at most this much CPU together in each of two windows in a row. */
const QUIET_CPU_MS = 20;
const WINDOW_MS = 500;
/** Past this the phase goes on, and says so: a replica that never quiets is a finding. */
const QUIET_TIMEOUT_MS = 30_000;

/** What a wait saw: how long it took, and the CPU of each window (ms), for the bench's log. */
export interface QuietWait {
  readonly waitedMs: number;
  readonly quiet: boolean;
  readonly windowsCpuMs: readonly number[];
}

/**
 * Waits `AFTER_START_MS`, then until the `processes`' CPU (each a reading of a process's user +
 * system CPU so far, 10 ms resolution) grows by at most `QUIET_CPU_MS` in each of two `WINDOW_MS`
 * windows in a row.
 */
export async function untilQuiet(...processes: (() => number)[]): Promise<QuietWait> {
  const cpuMicros = () => processes.reduce((sum, p) => sum + p(), 0);
  const started = performance.now();
  await sleep(AFTER_START_MS);
  const windowsCpuMs: number[] = [];
  let calm = 0;
  let before = cpuMicros();
  while (performance.now() - started < QUIET_TIMEOUT_MS) {
    await sleep(WINDOW_MS);
    const now = cpuMicros();
    const used = (now - before) / 1000;
    before = now;
    windowsCpuMs.push(used);
    calm = used <= QUIET_CPU_MS ? calm + 1 : 0;
    if (calm === 2) return { waitedMs: performance.now() - started, quiet: true, windowsCpuMs };
  }
  return { waitedMs: performance.now() - started, quiet: false, windowsCpuMs };
}

/** How the phases say when they begin, for their descriptions. */
export const QUIET_DESCRIPTION = `from ${AFTER_START_MS / 1000} s after the table landed and once the sidecar, its proxy (zero-hop) and the API server used at most ${QUIET_CPU_MS} ms of CPU together in each of two ${WINDOW_MS} ms windows in a row`;

/** One line for the bench's log. */
export const quietLine = (name: string, w: QuietWait) =>
  `${name}: ${w.quiet ? "quiet" : "NOT quiet"} after ${Math.round(w.waitedMs)} ms (CPU ms per ${WINDOW_MS} ms window after the first ${AFTER_START_MS} ms: ${w.windowsCpuMs.join(" ")})`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
