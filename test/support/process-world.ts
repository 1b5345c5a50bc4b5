// The smallest world a `serve` process is tested in end to end: envtest holding a Registry of the
// given Apps, each App's Secret with a token, and one sidecar process against it, ready.

import type { Envtest } from "@replica-mirror/envtest";
import { untilReady } from "./http.ts";
import { type SidecarProcess, startSidecarProcess } from "./process.ts";
import {
  type AppInput,
  envtestFor,
  kubeconfigFor,
  REGISTRY_NS,
  writeRegistry,
  writeSecret,
} from "./world.ts";

export interface ProcessWorld {
  readonly envtest: Envtest;
  readonly sidecar: SidecarProcess;
  /** Stops the sidecar (SIGKILL after `stopMs`), then envtest; removes the kubeconfig. */
  close(stopMs?: number): Promise<void>;
}

/** Starts envtest with `apps` (every Secret holding `token: t`) and a sidecar given `extraArgs`. */
export async function startProcessWorld(
  apps: readonly AppInput[],
  extraArgs: readonly string[] = [],
): Promise<ProcessWorld> {
  const envtest = await envtestFor();
  for (const a of apps)
    writeSecret(envtest, a.namespace ?? REGISTRY_NS, a.secret ?? `${a.name}-credentials`, {
      [a.key ?? "token"]: "t",
    });
  writeRegistry(envtest, apps);
  const kubeconfig = await kubeconfigFor(envtest);
  const sidecar = await startSidecarProcess({
    kubeconfig: kubeconfig.path,
    registryNamespace: REGISTRY_NS,
    extraArgs,
  });
  await untilReady(sidecar.opsPort);
  return {
    envtest,
    sidecar,
    async close(stopMs) {
      await sidecar.stop(stopMs);
      await kubeconfig.remove();
      await envtest.close();
    },
  };
}
