// The main thread's end of the data thread, and the mirror's sink for it: starts it, sends it the
// routes of every adopted Registry and a view of every published Snapshot, and stops it. Nothing
// comes back but lifecycle events; the route answer counts are in shared memory.

import type { ResourceLimits, Worker } from "node:worker_threads";
import type { Logger } from "pino";
import type { RetryAfterSeconds } from "../answers/route-answer.ts";
import { type Clock, systemClock } from "../clock.ts";
import type { SnapshotSink } from "../mirror/sink.ts";
import { err, ok, type Result } from "../result.ts";
import { logReleased } from "../runtime/start-up-collection.ts";
import type { RouteTable, Snapshot } from "../snapshot/types.ts";
import { Heartbeat, heartbeatMonitor } from "./heartbeat.ts";
import {
  DATA_LISTENER_DEFAULTS,
  dataListenerLimits,
  isLoopbackHost,
  type ListenerLimits,
} from "./listener-limits.ts";
import type { DataThreadSettings, FromDataThread, ToDataThread } from "./messages.ts";
import type { RouteCounts } from "./route-counts.ts";
import { spawnDataWorker } from "./spawn.ts";
import { routesMessage, viewUpdate } from "./view-update.ts";

/** How often the route counts are folded into their totals, well within 2^32 answers. */
const COUNTS_FOLD_MS = 60_000;

export interface DataThreadOptions {
  readonly listen: { readonly host: string; readonly port: number };
  /** Default: the defaults for `listen`'s host (`dataListenerLimits`). */
  readonly limits?: ListenerLimits;
  readonly retryAfter: RetryAfterSeconds;
  readonly counts: RouteCounts;
  readonly logger: Logger;
  /** Times the heartbeat; default: real time. */
  readonly clock?: Clock;
  /** How long the heartbeat may stand still before `answering` turns false; default 5 s. */
  readonly heartbeatStaleMs?: number;
  /** A worker `spawnDataWorker` started earlier; default: one spawned now. */
  readonly worker?: Worker;
  /** For tests, when no worker is given: the thread's V8 heap limits. Production sets none. */
  readonly resourceLimits?: ResourceLimits;
}

/**
 * A running data thread, and the mirror's sink for it. Messages to it wait until it runs, so it
 * can be published to at once.
 */
export interface DataThread extends SnapshotSink {
  /** Resolves with the port once it listens (port 0 resolved), or why it cannot (it has ended). */
  readonly listening: Promise<Result<number, string>>;
  /**
   * Sends the routes of an adopted Registry ahead of the Snapshot that will use them, so the
   * thread builds its indexes while the main thread still lists the App Secrets: built and sent
   * on a later turn, after the lists went out. Optional: `publish` sends what was not sent.
   */
  prepare(routes: () => RouteTable): void;
  /** Sends the view of a newly published Snapshot (a repeat is dropped); in order. */
  publish(snapshot: Snapshot): void;
  /**
   * Whether the thread's event loop still turns (its heartbeat moved within the last few
   * seconds): false once it is blocked or gone, though the process runs on.
   */
  answering(): boolean;
  /** The revision the data listener answers from; 0 before its first view. */
  servedRevision(): number;
  /** Resolves once the data listener answers from `revision` or a later one. */
  serving(revision: number): Promise<void>;
  /** The thread's V8 heap, used and total bytes; null once it has ended. */
  heap(): Promise<{ readonly used: number; readonly total: number } | null>;
  /** Stops accepting, cuts connections still open after `drainMs`, ends the thread. */
  close(drainMs: number): Promise<void>;
  /** Resolves, with why, if the thread ends without being closed: a bug, fatal to the sidecar. */
  readonly ended: Promise<string>;
}

/** Starts the data thread; it listens as soon as it runs (see `listening`). */
export function startDataThread(options: DataThreadOptions): DataThread {
  const { logger: log } = options;
  const heartbeat = new Heartbeat();
  const limits = options.limits ?? defaultLimits(options.listen.host);
  const settings: DataThreadSettings = {
    listen: options.listen,
    limits,
    retryAfter: options.retryAfter,
    counts: options.counts.buffer,
    heartbeat: heartbeat.buffer,
  };
  if (!isLoopbackHost(options.listen.host))
    log.warn(
      { listen: options.listen, idleTimeoutMs: limits.idleTimeoutMs },
      "the data listener is not on loopback: anyone who reaches it can read App names and upstreams",
    );
  const worker = options.worker ?? spawnDataWorker(options.resourceLimits);
  worker.ref();
  const send = (message: ToDataThread) => worker.postMessage(message);
  send({ type: "start", settings });

  let sent: Snapshot | null = null;
  let routesSent: { readonly table: RouteTable; readonly id: number } | null = null;
  const prepare = (table: RouteTable): number => {
    if (routesSent?.table === table) return routesSent.id;
    const id = (routesSent?.id ?? 0) + 1;
    send({ type: "routes", routes: routesMessage(id, table) });
    routesSent = { table, id };
    return id;
  };
  let served = 0;
  let waiters: { revision: number; resolve: () => void }[] = [];
  let closing = false;
  let exited = false;
  const beating = heartbeatMonitor(
    () => heartbeat.count(),
    options.clock ?? systemClock,
    options.heartbeatStaleMs,
  );
  let onGone = (): void => {};
  const ended = Promise.withResolvers<string>();
  const listening = Promise.withResolvers<Result<number, string>>();
  // Folds the route counts into their totals, so that no cell wraps twice between scrapes.
  const fold = setInterval(() => options.counts.totals(), COUNTS_FOLD_MS);
  fold.unref();

  worker.on("message", (message: FromDataThread) => {
    switch (message.type) {
      case "listening":
        listening.resolve(ok(message.port));
        return;
      case "listen-failed":
        listening.resolve(err(message.message));
        return;
      case "applied":
        served = message.revision;
        for (const w of waiters) if (w.revision <= served) w.resolve();
        waiters = waiters.filter((w) => w.revision > served);
        return;
      case "evicted":
        log.warn(
          {
            idle: message.idle,
            midRequest: message.midRequest,
            maxConnections: limits.maxConnections,
          },
          "data listener at its cap closed connections to let new ones in",
        );
        return;
      case "failed":
        log.error({ err: { message: message.message, stack: message.stack } }, "request failed");
        return;
      case "collected":
        logReleased(log, "data", message.released);
        return;
      case "closed":
        onGone();
        return;
    }
  });
  const gone = (why: string): void => {
    clearInterval(fold);
    listening.resolve(err(why));
    if (!closing) ended.resolve(why);
  };
  worker.on("error", (e) => gone(`the data thread failed: ${e.message}`));
  worker.on("exit", (code) => {
    exited = true;
    gone(`the data thread exited with status ${code}`);
    onGone();
  });

  return {
    name: "data-thread",
    listening: listening.promise,
    ended: ended.promise,
    prepare(routes) {
      setImmediate(() => {
        if (!closing) prepare(routes());
      });
    },
    publish(snapshot) {
      if (snapshot === sent) return;
      const routes = prepare(snapshot.routes);
      send({ type: "view", update: viewUpdate(sent, snapshot, routes) });
      sent = snapshot;
    },
    answering: () => !exited && beating(),
    servedRevision: () => served,
    serving(revision) {
      if (served >= revision) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ revision, resolve }));
    },
    async heap() {
      if (exited) return null;
      try {
        const heap = await worker.getHeapStatistics();
        return { used: heap.used_heap_size, total: heap.total_heap_size };
      } catch {
        return null;
      }
    },
    async close(drainMs) {
      closing = true;
      clearInterval(fold);
      if (exited) return;
      const done = new Promise<void>((resolve) => {
        onGone = resolve;
      });
      send({ type: "close", drainMs });
      await done;
      await worker.terminate();
    },
  };
}

const defaultLimits = (host: string): ListenerLimits =>
  dataListenerLimits({
    host,
    maxConnections: DATA_LISTENER_DEFAULTS.maxConnections,
    headersTimeoutSeconds: DATA_LISTENER_DEFAULTS.headersTimeoutSeconds,
    idleTimeoutSeconds: undefined,
  });
