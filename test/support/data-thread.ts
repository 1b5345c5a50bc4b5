// A data thread (ADR 27) in the test's process, as the sidecar starts it: its own listener on a
// free loopback port, fresh metrics counting its answers, the default Retry-After, serving the
// Snapshots a test publishes. A test changes only what it is about (the address, the limits, the
// worker, the heap).

import type { Logger } from "pino";
import { DEFAULT_RETRY_AFTER } from "../../src/answers/route-answer.ts";
import { createMetrics, type Metrics } from "../../src/ops/metrics.ts";
import {
  type DataThread,
  type DataThreadOptions,
  startDataThread,
} from "../../src/route/data-thread.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { memoryLogger } from "./log-sink.ts";

/** What a test sets of a data thread's options; the rest are the sidecar's. */
export type DataThreadChanges = Partial<Omit<DataThreadOptions, "counts" | "logger">>;

/** Starts a data thread with `changes` over the sidecar's options; it may not be listening yet. */
export function launchDataThread(
  logger: Logger,
  changes: DataThreadChanges = {},
): { thread: DataThread; metrics: Metrics } {
  const metrics = createMetrics();
  const thread = startDataThread({
    listen: { host: "127.0.0.1", port: 0 },
    retryAfter: DEFAULT_RETRY_AFTER,
    ...changes,
    counts: metrics.routeCounts,
    logger,
  });
  return { thread, metrics };
}

export interface TestDataThread {
  readonly thread: DataThread;
  readonly port: number;
  readonly metrics: Metrics;
  /** Publishes `snapshot` as the mirror would, and waits until the thread answers from it. */
  publish(snapshot: Snapshot): Promise<void>;
  close(): Promise<void>;
}

/** Starts a data thread and waits until it listens; with `snapshot`, serving it before this resolves. */
export async function startTestDataThread(
  snapshot?: Snapshot,
  logger: Logger = memoryLogger("warn").logger,
  changes: DataThreadChanges = {},
): Promise<TestDataThread> {
  const { thread, metrics } = launchDataThread(logger, changes);
  metrics.dataThreadHeap(() => thread.heap());
  const listening = await thread.listening;
  if (!listening.ok) throw new Error(listening.error);
  const publish = async (s: Snapshot) => {
    thread.publish(s);
    await thread.serving(s.revision);
  };
  if (snapshot !== undefined) await publish(snapshot);
  return { thread, port: listening.value, metrics, publish, close: () => thread.close(0) };
}
