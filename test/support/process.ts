// `replica-mirror serve` as a child process, the way it runs in a pod: its whole output is
// kept for scanning, its listeners are found from its "listening" log line, and its heap can be
// sampled after a full collection through the heap probe on the IPC channel.

import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const PROBE = fileURLToPath(new URL("./heap-probe.ts", import.meta.url));

/** Heap figures of the child after two full collections. */
export interface HeapSample {
  readonly heapUsed: number;
  readonly rss: number;
  readonly external: number;
  readonly gc: boolean;
}

export interface SidecarProcess {
  readonly dataPort: number;
  readonly opsPort: number;
  readonly pid: number;
  /** Everything the child wrote to stdout and stderr so far. */
  output(): string;
  /** stdout, one parsed JSON object per log line (lines that are not JSON are skipped). */
  logLines(): Record<string, unknown>[];
  /** Whether the child is still running. */
  alive(): boolean;
  heap(): Promise<HeapSample>;
  /** SIGTERM, then waits for the exit (SIGKILL after `ms`); resolves to the exit code and signal. */
  stop(ms?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SidecarProcessOptions {
  readonly kubeconfig: string;
  readonly registryNamespace?: string;
  readonly logLevel?: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  readonly watchTimeoutSeconds?: number;
  readonly extraArgs?: readonly string[];
  /** How long to wait for the "listening" line. */
  readonly startTimeoutMs?: number;
}

/** Starts the CLI child; resolves once it logged where it listens. */
export async function startSidecarProcess(o: SidecarProcessOptions): Promise<SidecarProcess> {
  const args = [
    "--expose-gc",
    "--import",
    PROBE,
    MAIN,
    "serve",
    "--kubeconfig",
    o.kubeconfig,
    "--registry-namespace",
    o.registryNamespace ?? "platform",
    "--listen",
    "127.0.0.1:0",
    "--ops-listen",
    "127.0.0.1:0",
    "--watch-timeout",
    String(o.watchTimeoutSeconds ?? 5),
    "--log-level",
    o.logLevel ?? "info",
    ...(o.extraArgs ?? []),
  ];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("REPLICA_MIRROR_")) env[k] = v;
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const chunks: string[] = [];
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    }),
  );
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (d: string) => chunks.push(d));
  child.stderr?.on("data", (d: string) => chunks.push(d));
  const output = () => chunks.join("");
  const logLines = () =>
    output()
      .split("\n")
      .flatMap((l) => {
        try {
          const v = JSON.parse(l) as unknown;
          return typeof v === "object" && v !== null ? [v as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      });

  const deadline = Date.now() + (o.startTimeoutMs ?? 20_000);
  let ports: { data: number; ops: number } | undefined;
  while (ports === undefined) {
    const line = logLines().find((l) => l.msg === "listening");
    if (line !== undefined) {
      const { listen, opsListen } = line as {
        listen: { port: number };
        opsListen: { port: number };
      };
      ports = { data: listen.port, ops: opsListen.port };
      break;
    }
    if (exited !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`sidecar did not start: ${JSON.stringify(exited)}\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }

  let heapQueue = Promise.resolve();
  return {
    dataPort: ports.data,
    opsPort: ports.ops,
    pid: child.pid ?? -1,
    output,
    logLines,
    alive: () => exited === null,
    heap: () => {
      const next = heapQueue.then(
        () =>
          new Promise<HeapSample>((resolve, reject) => {
            const t = setTimeout(() => reject(new Error("heap probe did not answer")), 10_000);
            child.once("message", (m) => {
              clearTimeout(t);
              resolve(m as HeapSample);
            });
            child.send("heap");
          }),
      );
      heapQueue = next.then(
        () => undefined,
        () => undefined,
      );
      return next;
    },
    stop: async (ms = 8_000) => {
      if (exited !== null) return exited;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), ms);
      const result = await exit;
      clearTimeout(t);
      return result;
    },
  };
}
