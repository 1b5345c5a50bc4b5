// `startSidecar` in the test's own process, configured exactly as the CLI would be, logging
// JSON lines into memory: for tests that read the mirror's state through its HTTP API and need
// to count this process's own resources.

import type { Envtest } from "@replica-mirror/envtest";
import { parseServeConfig, type ServeConfig } from "../../../src/cli/config.ts";
import { type Sidecar, startSidecar } from "../../../src/cli/serve.ts";
import { memoryLogger } from "../../http/log-sink.ts";
import { kubeconfigFor, REGISTRY_NS } from "./world.ts";

export interface InProcessSidecar {
  readonly sidecar: Sidecar;
  /** Every line the logger wrote so far. */
  lines(): string[];
  stop(): Promise<void>;
}

/** Starts the sidecar against `envtest` with `serve` flags on top of the test defaults. */
export async function startInProcess(
  envtest: Envtest,
  options: { logLevel?: ServeConfig["logLevel"]; watchTimeoutSeconds?: number } = {},
): Promise<InProcessSidecar> {
  const kubeconfig = await kubeconfigFor(envtest);
  const config = parseServeConfig(
    [
      "--kubeconfig",
      kubeconfig.path,
      "--registry-namespace",
      REGISTRY_NS,
      "--listen",
      "127.0.0.1:0",
      "--ops-listen",
      "127.0.0.1:0",
      "--watch-timeout",
      String(options.watchTimeoutSeconds ?? 5),
      "--log-level",
      options.logLevel ?? "debug",
    ],
    {},
  );
  if (!config.ok) throw new Error(config.error);
  const { logger, lines } = memoryLogger(config.value.logLevel);
  const started = await startSidecar(config.value, logger);
  if (!started.ok) throw new Error(started.error);
  return {
    sidecar: started.value,
    lines,
    stop: async () => {
      await started.value.close();
      await kubeconfig.remove();
    },
  };
}
