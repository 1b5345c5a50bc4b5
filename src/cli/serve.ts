import type { Logger } from "pino";
import { systemClock } from "../kube/clock.ts";
import type { SidecarConfig } from "../sidecar/config.ts";
import { makeLogger, startSidecar } from "../sidecar/sidecar.ts";
import {
  collectAfterFirstPublish,
  STARTUP_COLLECTION_DELAY_MS,
  type StartupCollection,
  v8FullCollection,
} from "../sidecar/startup-memory.ts";

/** Runs `serve` until SIGTERM or SIGINT; exits 0 after a clean stop, at the latest after 5 s. */
export async function runServe(config: SidecarConfig): Promise<number> {
  const log = makeLogger(config.logLevel);
  const collection = startupCollection(log);
  const started = await startSidecar(config, {
    logger: log,
    observer: collection.observer,
  });
  if (!started.ok) {
    log.fatal({ err: started.error }, "cannot start");
    return 1;
  }
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, "shutting down");
      collection.cancel();
      const force = setTimeout(() => resolve(0), 5_000);
      force.unref();
      void started.value.close().then(() => {
        clearTimeout(force);
        resolve(0);
      });
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}

/**
 * The process's one full collection after its first Snapshot (ADR 25). Here, not in
 * `startSidecar`: it collects the whole process, which only the CLI owns (tests run sidecars
 * inside their own process).
 */
function startupCollection(log: Logger): StartupCollection {
  return collectAfterFirstPublish({
    clock: systemClock,
    delayMs: STARTUP_COLLECTION_DELAY_MS,
    collect: v8FullCollection,
    log,
  });
}
