// `replica-mirror` as a child process, the way it runs in a pod: its whole output is kept for
// scanning, a `serve` process's listeners are found from its "listening" log line, and its heap
// can be sampled after a full collection through the heap probe on the IPC channel.

import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serveFlags } from "./serve-flags.ts";
import { waitUntil } from "./wait.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const PROBE = fileURLToPath(new URL("./heap-probe.ts", import.meta.url));

/** How a child ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running (or finished) command with everything it wrote to stdout and stderr. */
export interface Command {
  readonly child: ChildProcess;
  /** Everything written so far. */
  output(): string;
  /** The output split into lines (the last one may be partial while the command runs). */
  lines(): string[];
  /** One parsed JSON object per log line of the output (lines that are not JSON are skipped). */
  logLines(): Record<string, unknown>[];
  /** Resolves once the command exited and closed its output (every process holding it, too). */
  readonly exit: Promise<Exit>;
  /** The exit, once it happened. */
  exited(): Exit | null;
}

/** Runs `command` from the repository root; `ipc` adds an IPC channel. */
export function startCommand(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; ipc?: boolean } = {},
): Command {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe", ...(options.ipc === true ? (["ipc"] as const) : [])],
  });
  const chunks: string[] = [];
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (d: string) => chunks.push(d));
  child.stderr?.on("data", (d: string) => chunks.push(d));
  let exited: Exit | null = null;
  const exit = new Promise<Exit>((resolve) =>
    child.once("close", (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    }),
  );
  const output = () => chunks.join("");
  const lines = () => output().split("\n");
  return {
    child,
    output,
    lines,
    logLines: () =>
      lines().flatMap((l) => {
        try {
          const v = JSON.parse(l) as unknown;
          return typeof v === "object" && v !== null ? [v as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      }),
    exit,
    exited: () => exited,
  };
}

/** The ports a `serve` command logged in its "listening" line; rejects if it exits first. */
export async function listeningPorts(
  c: Command,
  timeoutMs = 20_000,
): Promise<{ data: number; ops: number }> {
  const found = await waitUntil(
    () => {
      const line = c.logLines().find((l) => l.msg === "listening");
      if (line !== undefined) {
        const { listen, opsListen } = line as {
          listen: { port: number };
          opsListen: { port: number };
        };
        return { data: listen.port, ops: opsListen.port };
      }
      return c.exited() ?? undefined;
    },
    { timeoutMs, intervalMs: 20, what: "the listening line" },
  ).catch((e: unknown) => new Error(String(e)));
  if ("data" in found) return found;
  c.child.kill("SIGKILL");
  throw new Error(
    `sidecar did not start: ${found instanceof Error ? found.message : JSON.stringify(found)}\n${c.output()}`,
  );
}

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
  stop(ms?: number): Promise<Exit>;
  /** SIGKILL, as an OOM kill would: no shutdown runs; resolves once it is gone. */
  kill(): Promise<Exit>;
}

interface SidecarProcessOptions {
  readonly kubeconfig: string;
  readonly registryNamespace?: string;
  readonly logLevel?: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  readonly watchTimeoutSeconds?: number;
  readonly extraArgs?: readonly string[];
  /** How long to wait for the "listening" line. */
  readonly startTimeoutMs?: number;
  /** The CLI to run: default the sources' entry; a bundle's `main.mjs` to run what ships. */
  readonly entry?: string;
  /** Added to the environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts `serve` as a child; resolves once it logged where it listens. */
export async function startSidecarProcess(o: SidecarProcessOptions): Promise<SidecarProcess> {
  const args = [
    "--expose-gc",
    "--import",
    PROBE,
    o.entry ?? MAIN,
    "serve",
    ...serveFlags(o.kubeconfig, o.registryNamespace ?? "platform", [
      "--watch-timeout",
      String(o.watchTimeoutSeconds ?? 5),
      "--log-level",
      o.logLevel ?? "info",
      // `stop` closes at once unless a test asks for the grace (extraArgs win).
      "--shutdown-grace",
      "0",
      ...(o.extraArgs ?? []),
    ]),
  ];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("REPLICA_MIRROR_")) env[k] = v;
  const c = startCommand(process.execPath, args, { env: { ...env, ...o.env }, ipc: true });
  const { child } = c;
  const ports = await listeningPorts(c, o.startTimeoutMs);

  let heapQueue = Promise.resolve();
  return {
    dataPort: ports.data,
    opsPort: ports.ops,
    pid: child.pid ?? -1,
    output: c.output,
    logLines: c.logLines,
    alive: () => c.exited() === null,
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
    kill: async () => {
      const done = c.exited();
      if (done !== null) return done;
      child.kill("SIGKILL");
      return c.exit;
    },
    stop: async (ms = 8_000) => {
      const done = c.exited();
      if (done !== null) return done;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), ms);
      const result = await c.exit;
      clearTimeout(t);
      return result;
    },
  };
}
