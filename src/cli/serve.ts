import type { SidecarConfig } from "../sidecar/config.ts";
import { makeLogger, startSidecar } from "../sidecar/sidecar.ts";

/** Runs `serve` until SIGTERM or SIGINT; exits 0 after a clean stop, at the latest after 5 s. */
export async function runServe(config: SidecarConfig): Promise<number> {
  const log = makeLogger(config.logLevel);
  const started = await startSidecar(config, { logger: log });
  if (!started.ok) {
    log.fatal({ err: started.error }, "cannot start");
    return 1;
  }
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, "shutting down");
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
