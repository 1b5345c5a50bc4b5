// A server under measurement in its own process, started with the test kit's process starter and
// read from the outside only: resident memory and CPU from /proc, nothing injected into it (no IPC
// channel, no --expose-gc, no preload), so what is measured is the process as it runs in a pod.

import { startCommand } from "../test/support/process.ts";
import { cpuMicros, rssBytes } from "./proc-stats.ts";

/** A measured server process. */
export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  /** Where `/v1/route` is answered. */
  readonly dataPort: number;
  /** Where `/readyz` and `/metrics` are answered (the data port for a baseline). */
  readonly opsPort: number;
  /** `performance.now()` just before the spawn. */
  readonly spawnedAt: number;
  /** Resident set size now (VmRSS), bytes. */
  rss(): number;
  /** User + system CPU used so far, microseconds (10 ms resolution). */
  cpuMicros(): number;
  /** Everything it wrote to stdout and stderr. */
  output(): string;
  /** SIGTERM, SIGKILL after `ms`; resolves once it is gone. */
  stop(ms?: number): Promise<void>;
}

const live = new Set<() => void>();
process.once("exit", () => {
  for (const kill of live) kill();
});

/** Spawns `node <args>` (the bench's Node binary) with `env` added to this process's own. */
export function startServerProcess(o: {
  readonly name: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Variables of this process's environment not passed on. */
  readonly withoutEnv?: readonly string[];
  readonly dataPort: number;
  readonly opsPort?: number;
}): ServerProcess {
  const env: NodeJS.ProcessEnv = {};
  // The bench's own NODE_OPTIONS (npm's, a debugger's) must not reach the measured process.
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("REPLICA_MIRROR_") && k !== "NODE_OPTIONS" && !o.withoutEnv?.includes(k))
      env[k] = v;
  const spawnedAt = performance.now();
  const c = startCommand(process.execPath, o.args, { env: { ...env, ...o.env } });
  const pid = c.child.pid ?? -1;
  const kill = () => c.child.kill("SIGKILL");
  live.add(kill);
  return {
    name: o.name,
    pid,
    dataPort: o.dataPort,
    opsPort: o.opsPort ?? o.dataPort,
    spawnedAt,
    rss: () => rssBytes(pid),
    cpuMicros: () => cpuMicros(pid),
    output: c.output,
    async stop(ms = 2_000) {
      live.delete(kill);
      if (c.exited() !== null) return;
      c.child.kill("SIGTERM");
      const t = setTimeout(kill, ms);
      await c.exit;
      clearTimeout(t);
    },
  };
}
