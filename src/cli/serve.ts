import type { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { sleep, systemClock } from "../clock.ts";
import {
  collectOnce,
  logReleased,
  MAIN_THREAD_DELAY_MS,
  v8FullCollection,
} from "../runtime/start-up-collection.ts";
import type { SidecarConfig } from "../sidecar/config.ts";
import { makeLogger, type Sidecar, startSidecar } from "../sidecar/sidecar.ts";

/** How long closing the sidecar (its 3 s drain included) may take before the process exits anyway. */
const CLOSE_DEADLINE_MS = 5_000;
/** How long the process may linger after a clean stop before it exits anyway. */
const LINGER_MS = 1_000;

/**
 * Runs `serve` until SIGTERM or SIGINT. SIGTERM starts the shutdown grace: /readyz answers 503
 * while routing and /healthz go on, for `shutdownGraceSeconds`; then the listeners close. SIGINT
 * (or a second signal) closes them at once. Exits 0 after a clean stop. If the data listener's
 * thread fails or ends by itself, stops at once and exits 1, so the kubelet restarts the
 * container rather than keep a replica that answers from a view nobody updates. Whatever is left
 * open, the process ends: at the latest `CLOSE_DEADLINE_MS` after the listeners began to close.
 */
export async function runServe(config: SidecarConfig, dataWorker?: Worker): Promise<number> {
  const log = makeLogger(config.logLevel);
  const collection = collectOnce({
    clock: systemClock,
    delayMs: MAIN_THREAD_DELAY_MS,
    collect: v8FullCollection,
    report: (released) => logReleased(log, "main", released),
  });
  const started = await startSidecar(config, {
    logger: log,
    ...(dataWorker === undefined ? {} : { dataWorker }),
  });
  if (!started.ok) {
    log.fatal({ err: started.error }, "cannot start");
    return 1;
  }
  const sidecar = started.value;
  // The main thread's share of the collection after start (the data thread runs its own). Here,
  // not in `startSidecar`: it collects the whole heap, which only the CLI owns (tests run sidecars
  // inside their own process). Due once the data listener answers from the first Snapshot, not
  // when it is published (ADR 73): at 100k Apps the data thread's index took longer than the
  // delay, and the collection's pause kept `/readyz` from answering 200 for up to a second. And
  // once each proxy's first table was pushed and verified (ADR 81): at 100k Apps a collection
  // during nginx's first push kept its 14 MB body, and the next one, seconds later, paused
  // the pushes of the first changes.
  void sidecar.settled.then(() => collection.due());
  const status = await stopOnSignals(sidecar, {
    graceMs: config.shutdownGraceSeconds * 1000,
    log,
    onStop: () => collection.cancel(),
  });
  // Every handle should be closed by now; one left open (a bug) must not keep a stopped replica
  // alive. Unreferenced: a process with nothing left exits without waiting for it.
  setTimeout(() => {
    log.error("a stopped sidecar was kept running by a handle left open: exiting");
    process.exit(status);
  }, LINGER_MS).unref();
  return status;
}

/**
 * Stops `sidecar` on the first signal or failure, as `runServe` says; resolves with the exit
 * status once it closed.
 */
function stopOnSignals(
  sidecar: Sidecar,
  o: { readonly graceMs: number; readonly log: Logger; readonly onStop: () => void },
): Promise<number> {
  const { graceMs, log } = o;
  const status = Promise.withResolvers<number>();
  let exitStatus: number | null = null;
  const skipGrace = new AbortController();
  const stop = async (code: number, grace: number): Promise<void> => {
    if (exitStatus !== null) {
      exitStatus = Math.max(exitStatus, code);
      skipGrace.abort();
      return;
    }
    exitStatus = code;
    o.onStop();
    sidecar.beginShutdown();
    if (grace > 0) await sleep(systemClock, grace, skipGrace.signal);
    log.info("closing the listeners");
    const deadline = setTimeout(() => {
      log.error({ deadlineMs: CLOSE_DEADLINE_MS }, "the sidecar did not close in time: exiting");
      process.exit(1);
    }, CLOSE_DEADLINE_MS);
    await sidecar.close();
    clearTimeout(deadline);
    status.resolve(exitStatus ?? code);
  };
  process.on("SIGTERM", () => {
    log.info({ signal: "SIGTERM", graceSeconds: graceMs / 1000 }, "shutting down");
    void stop(0, graceMs);
  });
  process.on("SIGINT", () => {
    log.info({ signal: "SIGINT" }, "shutting down");
    void stop(0, 0);
  });
  void sidecar.failed.then((why) => {
    log.fatal({ err: why }, "data listener lost");
    void stop(1, 0);
  });
  return status.promise;
}
