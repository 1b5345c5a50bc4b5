// Readings of another process from /proc (Linux): what `ps` and the kubelet see, taken without
// touching the process.

import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc/PID/stat (`getconf CLK_TCK`; 100 on Linux everywhere). */
const TICKS_PER_SECOND = 100;

/** VmRSS of a live process, in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kib) * 1024;
}

/** User + system CPU of a live process so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / TICKS_PER_SECOND;
}
