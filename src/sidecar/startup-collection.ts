import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import type { MirrorObserver } from "../mirror/observer.ts";
import type { Result } from "../result.ts";

/** The observer that schedules the collection, and a way to call it off. */
export interface StartupCollection {
  readonly observer: MirrorObserver;
  /** Cancels a collection not yet run (on shutdown). */
  cancel(): void;
}

/**
 * Runs `collect` once, `delayMs` after the first Snapshot is published, and logs what it gave
 * back. The initial lists leave the heap grown and full of garbage (at 10k Apps about a quarter
 * of the resident set); V8 on its own keeps those pages while the process idles.
 */
export function collectAfterFirstPublish(options: {
  readonly clock: Clock;
  readonly delayMs: number;
  readonly collect: () => Result<void, string>;
  readonly log: Logger;
}): StartupCollection {
  let scheduled = false;
  let cancel = (): void => {};
  const run = (): void => {
    const before = process.memoryUsage();
    const started = options.clock.now();
    const collected = options.collect();
    const ms = options.clock.now() - started;
    if (!collected.ok) {
      options.log.warn({ reason: collected.error }, "start-up memory not released");
      return;
    }
    const after = process.memoryUsage();
    options.log.info(
      {
        ms: Math.round(ms),
        rssMiB: [mib(before.rss), mib(after.rss)],
        heapTotalMiB: [mib(before.heapTotal), mib(after.heapTotal)],
        heapUsedMiB: [mib(before.heapUsed), mib(after.heapUsed)],
      },
      "start-up memory released",
    );
  };
  return {
    observer: {
      published() {
        if (scheduled) return;
        scheduled = true;
        cancel = options.clock.setTimer(options.delayMs, run);
      },
    },
    cancel: () => cancel(),
  };
}

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
