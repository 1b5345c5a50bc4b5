import { type ChildProcess, fork } from "node:child_process";
import { createServer } from "node:net";

/**
 * Starts a bench script in its own Node process (the same Node 24 binary), with an IPC channel.
 * Every child is killed when the bench exits, so an interrupted run leaves no server behind.
 */
export function forkChild(script: string, args: string[], execArgv: string[] = []): ChildProcess {
  const child = fork(new URL(script, import.meta.url).pathname, args, {
    execArgv,
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  live.add(child);
  child.once("exit", () => live.delete(child));
  return child;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of live) c.kill("SIGKILL");
});

/** Sends `message` (when given) and resolves with the child's next message; rejects if it exits. */
export function ask<T>(proc: ChildProcess, message?: unknown, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`child gave no answer in ${timeoutMs} ms`)),
      timeoutMs,
    );
    const exited = (code: number | null) => done(new Error(`child exited with ${code}`));
    const answered = (m: unknown) => done(null, m as T);
    function done(error: Error | null, value?: T): void {
      clearTimeout(timer);
      proc.off("exit", exited);
      proc.off("message", answered);
      if (error === null) resolve(value as T);
      else reject(error);
    }
    proc.once("exit", exited);
    proc.once("message", answered);
    if (message !== undefined) proc.send(message as object);
  });
}

/** Stops a child and waits for it to be gone (SIGKILL after graceMs, a second by default). */
export async function stopChild(proc: ChildProcess, graceMs = 1_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  proc.kill("SIGTERM");
  const t = setTimeout(() => proc.kill("SIGKILL"), graceMs);
  await gone;
  clearTimeout(t);
}

/** A loopback port that was free a moment ago (for children that must be told their port). */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/**
 * `count` distinct loopback ports that were free a moment ago: each held open until all are
 * found, so two of them cannot be the same port released and handed out again.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (s) =>
        new Promise<number>((resolve, reject) => {
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => {
            const address = s.address();
            resolve(typeof address === "object" && address !== null ? address.port : 0);
          });
        }),
    ),
  );
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** The value of `--name=value` in this process's arguments. */
export function flag(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}
