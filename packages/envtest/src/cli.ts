#!/usr/bin/env node
// `envtest`: runs the fake API server until SIGTERM or SIGINT and writes a kubeconfig for it.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Envtest, startEnvtest } from "./envtest.ts";
import { type FeatureGates, parseFeatureGates } from "./feature-gates.ts";
import { seedDemo } from "./seed.ts";

const USAGE =
  "usage: envtest [--port N] [--seed demo|none] [--kubeconfig PATH] [--feature-gates WatchList=false]";

/** The command's flags, already parsed. */
export interface EnvtestArgs {
  readonly port?: number;
  readonly seed: "demo" | "none";
  /** Where to write the kubeconfig; default a fresh temporary directory. */
  readonly kubeconfigPath?: string;
  readonly featureGates?: Partial<FeatureGates>;
}

/** Parses the flags; a message naming the bad one otherwise. */
export function parseEnvtestArgs(argv: readonly string[]): EnvtestArgs | string {
  let values: { port?: string; seed?: string; kubeconfig?: string; "feature-gates"?: string };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: "string" },
        seed: { type: "string" },
        kubeconfig: { type: "string" },
        "feature-gates": { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    return `${(e as Error).message}\n${USAGE}`;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    return `--port: expected 0-65535, got '${values.port}'`;
  const seed = values.seed ?? "none";
  if (seed !== "demo" && seed !== "none") return `--seed: expected demo or none, got '${seed}'`;
  const gatesText = values["feature-gates"];
  const featureGates = gatesText === undefined ? undefined : parseFeatureGates(gatesText);
  if (typeof featureGates === "string") return featureGates;
  return {
    seed,
    ...(featureGates === undefined ? {} : { featureGates }),
    ...(port === undefined ? {} : { port }),
    ...(values.kubeconfig === undefined ? {} : { kubeconfigPath: values.kubeconfig }),
  };
}

/** Starts the server on 127.0.0.1, seeds it, writes the kubeconfig, and logs where both are. */
export async function runEnvtest(args: EnvtestArgs, log: (line: string) => void): Promise<Envtest> {
  const envtest = await startEnvtest({
    port: args.port ?? 0,
    host: "127.0.0.1",
    ...(args.featureGates === undefined ? {} : { featureGates: args.featureGates }),
  });
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

/** Resolves on the first SIGTERM or SIGINT. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (signal: string) => () => {
      process.off("SIGTERM", term);
      process.off("SIGINT", int);
      resolve(signal);
    };
    const term = on("SIGTERM");
    const int = on("SIGINT");
    process.once("SIGTERM", term);
    process.once("SIGINT", int);
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseEnvtestArgs(argv);
  if (typeof args === "string") {
    process.stderr.write(`envtest: ${args}\n`);
    return 2;
  }
  const envtest = await runEnvtest(args, (line) => process.stdout.write(`${line}\n`));
  await untilSignal();
  await envtest.close();
  return 0;
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
