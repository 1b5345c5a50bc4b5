import { runEnvtest } from "./envtest.ts";

/** `envtest [--port N] [--seed demo|none] [--kubeconfig PATH]`: runs until SIGTERM or SIGINT. */
export async function runEnvtestCommand(
  argv: readonly string[],
  print: (line: string) => void,
  fail: (line: string) => void,
): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === "string") {
    fail(args);
    return 2;
  }
  const envtest = await runEnvtest(args, print);
  await untilSignal();
  await envtest.close();
  return 0;
}

interface EnvtestArgs {
  port?: number;
  seed: "demo" | "none";
  kubeconfigPath?: string;
}

function parseArgs(argv: readonly string[]): EnvtestArgs | string {
  const args: EnvtestArgs = { seed: "none" };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split("=", 2) as [string, string | undefined];
    const value = inline ?? argv[++i];
    if (value === undefined) return `${flag}: needs a value`;
    if (flag === "--port") {
      const port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        return `--port: expected 0-65535, got '${value}'`;
      args.port = port;
    } else if (flag === "--seed") {
      if (value !== "demo" && value !== "none")
        return `--seed: expected demo or none, got '${value}'`;
      args.seed = value;
    } else if (flag === "--kubeconfig") {
      args.kubeconfigPath = value;
    } else {
      return `${flag}: unknown flag (envtest takes --port, --seed, --kubeconfig)`;
    }
  }
  return args;
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
