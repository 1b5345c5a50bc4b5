// The one runtime device the sidecar keeps (ADR 59): V8's most thorough collection, once per
// isolate, shortly after the first Snapshot. The initial lists leave each heap grown and full of
// garbage, and V8 on its own keeps those pages while the process idles; without it, RSS after
// sync at 10k Apps is about 1.5x (the main thread's) and 1.05x more (the data thread's).

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import { err, ok, type Result } from "../result.ts";

/**
 * The main thread's collection, after the data listener answers from the first Snapshot (ADR 73).
 * Long enough that a `/readyz` probe waiting on the ready thread is answered first; short enough
 * that it runs before the data plane sends traffic, which waits for the kubelet's next probe
 * (every second at start-up) and for the endpoints to carry the Pod.
 */
export const MAIN_THREAD_DELAY_MS = 250;

/**
 * The data thread's, after its first view, which the main thread posts as it publishes: the
 * main thread's has run by then. Each sets a process-wide V8 flag for a moment; run at once,
 * either might find no `gc` in its context.
 */
export const DATA_THREAD_DELAY_MS = 500;

/** What one collection gave back: the pause, and each figure before and after, MiB. */
export interface Released {
  readonly ms: number;
  readonly rssMiB: readonly [number, number];
  readonly heapTotalMiB: readonly [number, number];
  readonly heapUsedMiB: readonly [number, number];
}

/** One collection waiting for its moment. */
export interface StartupCollection {
  /** Starts the delay; later calls do nothing. */
  due(): void;
  /** Cancels a collection not yet run (on shutdown). */
  cancel(): void;
}

/** Runs `collect` once, `delayMs` after the first `due()`, and reports what it gave back. */
export function collectOnce(o: {
  readonly clock: Clock;
  readonly delayMs: number;
  readonly collect: () => Result<void, string>;
  readonly report: (released: Result<Released, string>) => void;
}): StartupCollection {
  let scheduled = false;
  let cancel = (): void => {};
  const run = (): void => {
    const before = process.memoryUsage();
    const started = o.clock.now();
    const collected = o.collect();
    const ms = Math.round(o.clock.now() - started);
    if (!collected.ok) {
      o.report(collected);
      return;
    }
    const after = process.memoryUsage();
    const pair = (k: "rss" | "heapTotal" | "heapUsed") => [mib(before[k]), mib(after[k])] as const;
    o.report(
      ok({
        ms,
        rssMiB: pair("rss"),
        heapTotalMiB: pair("heapTotal"),
        heapUsedMiB: pair("heapUsed"),
      }),
    );
  };
  return {
    due() {
      if (scheduled) return;
      scheduled = true;
      cancel = o.clock.setTimer(o.delayMs, run);
    },
    cancel: () => cancel(),
  };
}

/** Logs what a thread's collection gave back, or why there was none. */
export function logReleased(
  log: Logger,
  thread: "main" | "data",
  released: Result<Released, string>,
): void {
  const what = thread === "main" ? "start-up memory" : "the data thread's start-up memory";
  if (released.ok) log.info(released.value, `${what} released`);
  else log.warn({ reason: released.error }, `${what} not released`);
}

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

/**
 * V8's most thorough collection of the calling isolate (`gc({flavor: "last-resort"})`:
 * mark-compact until nothing more is freed, the young generation shrunk, free pages given back),
 * without `--expose-gc` on the command line: the flag is set only while one throwaway context is
 * created, so no global `gc` exists anywhere else. A runtime that refuses the flag is an expected
 * failure.
 */
export function v8FullCollection(): Result<void, string> {
  let gc: unknown;
  try {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("typeof gc === 'function' ? gc : undefined");
  } catch (e) {
    return err(`V8's gc is not available: ${(e as Error).message}`);
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
  if (typeof gc !== "function") return err("V8's gc is not available in a new context");
  gc({ type: "major", execution: "sync", flavor: "last-resort" });
  return ok(undefined);
}
