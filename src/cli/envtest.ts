/** `replica-mirror envtest`: runs the fake API server and writes a kubeconfig for it. */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envtest, seedDemo, startEnvtest } from "../envtest/index.ts";

/** The `envtest` command's flags, already parsed. */
export interface EnvtestArgs {
  readonly port?: number;
  readonly seed: "demo" | "none";
  /** Where to write the kubeconfig; default a fresh temporary directory. */
  readonly kubeconfigPath?: string;
}

/** Starts the server on 127.0.0.1, seeds it, writes the kubeconfig, and logs where both are. */
export async function runEnvtest(args: EnvtestArgs, log: (line: string) => void): Promise<Envtest> {
  const envtest = await startEnvtest({ port: args.port ?? 0, host: "127.0.0.1" });
  try {
    if (args.seed === "demo") seedDemo(envtest);
    const path =
      args.kubeconfigPath ??
      join(await mkdtemp(join(tmpdir(), "replica-mirror-envtest-")), "kubeconfig");
    await envtest.writeKubeconfig(path);
    log(`envtest API server listening on ${envtest.url}`);
    log(`kubeconfig written to ${path} (export KUBECONFIG=${path})`);
    if (args.seed === "demo")
      log(
        "seeded default/replica-registry and tenant-a/shop-credentials (tenant-b/blog-credentials left missing)",
      );
    return envtest;
  } catch (e) {
    await envtest.close();
    throw e;
  }
}
