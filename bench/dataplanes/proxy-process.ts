// A real proxy (nginx, Caddy, HAProxy, or the upstream's nginx) as a child process of the bench,
// read from the outside: its CPU from /proc, summed over the process and its descendants (nginx's
// master and workers; Caddy's and HAProxy's threads are one process). Its stdout is discarded:
// HAProxy's shipped configuration logs every request there, which a run must not keep in memory.

import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { through } from "../../test/support/data-plane.ts";
import { waitUntil } from "../../test/support/wait.ts";
import { stopChild } from "../child.ts";
import { cpuMicros } from "../proc-stats.ts";

/** A proxy the bench started. */
export interface ProxyProcess {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  /** User + system CPU of the process and its descendants so far, microseconds. */
  cpuMicros(): number;
  /** The last few kilobytes it wrote to stderr, for failure messages. */
  stderr(): string;
  /** SIGTERM, SIGKILL after 5 s; resolves once it is gone. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of live) c.kill("SIGKILL");
});

/** Spawns `command args` and waits (bounded) until it answers HTTP on 127.0.0.1:`port`. */
export async function startProxy(o: {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly port: number;
}): Promise<ProxyProcess> {
  const child = spawn(o.command, o.args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...o.env },
  });
  live.add(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (d: string) => {
    stderr = (stderr + d).slice(-4096);
  });
  const pid = child.pid ?? -1;
  let tree: number[] = [pid];
  const proxy: ProxyProcess = {
    name: o.name,
    pid,
    port: o.port,
    // A process of the tree gone (a crashed nginx worker) throws: the run is invalid.
    cpuMicros: () => tree.reduce((sum, p) => sum + cpuMicros(p), 0),
    stderr: () => stderr,
    stop() {
      live.delete(child);
      return stopChild(child, 5_000);
    },
  };
  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
        return through(o.port, { host: "probe.example.com", path: "/" }).then(() => true);
      },
      { timeoutMs: 15_000, intervalMs: 50, what: `${o.name} to answer on port ${o.port}` },
    );
  } catch (e) {
    await proxy.stop();
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  // Workers are forked before the first answer; the tree is fixed from then on.
  tree = processTree(pid);
  return proxy;
}

/** `pid` and its live descendants, from each process's parent in /proc/<pid>/stat. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // Gone between the listing and the read.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++)
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  return tree;
}
