import type { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { systemClock } from "../clock.ts";
import { STARTUP_COLLECTION_DELAY_MS, v8FullCollection } from "../runtime/v8-collection.ts";
import type { SidecarConfig } from "../sidecar/config.ts";
import { makeLogger, startSidecar } from "../sidecar/sidecar.ts";
import { collectAfterFirstPublish, type StartupCollection } from "../sidecar/startup-collection.ts";

/**
 * Runs `serve` until SIGTERM or SIGINT; exits 0 after a clean stop, at the latest after 5 s. If
 * the data listener's thread ends by itself (a bug), stops and exits 1, so the kubelet restarts
 * the container rather than keep a replica without a data listener.
 */
export async function runServe(config: SidecarConfig, dataWorker?: Worker): Promise<number> {
  const log = makeLogger(config.logLevel);
  const collection = startupCollection(log);
  const started = await startSidecar(config, {
    logger: log,
    observer: collection.observer,
    ...(dataWorker === undefined ? {} : { dataWorker }),
  });
  if (!started.ok) {
    log.fatal({ err: started.error }, "cannot start");
    return 1;
  }
  const sidecar = started.value;
  return new Promise((resolve) => {
    const stop = (status: number) => {
      collection.cancel();
      const force = setTimeout(() => resolve(status), 5_000);
      force.unref();
      void sidecar.close().then(() => {
        clearTimeout(force);
        resolve(status);
      });
    };
    const onSignal = (signal: string) => {
      log.info({ signal }, "shutting down");
      stop(0);
    };
    process.once("SIGTERM", () => onSignal("SIGTERM"));
    process.once("SIGINT", () => onSignal("SIGINT"));
    void sidecar.failed.then((why) => {
      log.fatal({ err: why }, "data listener lost");
      stop(1);
    });
  });
}

/**
 * The main thread's share of the one full collection after start; the data thread runs
 * its own. Here, not in `startSidecar`: it collects the whole heap, which only the CLI owns
 * (tests run sidecars inside their own process).
 */
function startupCollection(log: Logger): StartupCollection {
  return collectAfterFirstPublish({
    clock: systemClock,
    delayMs: STARTUP_COLLECTION_DELAY_MS,
    collect: v8FullCollection,
    log,
  });
}
