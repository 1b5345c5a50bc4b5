// The TCP ports a process listens on, read from /proc: its socket inodes (/proc/<pid>/fd) matched
// with the listening sockets of its network namespace (/proc/<pid>/net/tcp and tcp6).

import { readdirSync, readFileSync, readlinkSync } from "node:fs";

const LISTEN = "0A";

/** The TCP ports `pid` listens on (IPv4 and IPv6), sorted, each once. Linux only. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m !== null) inodes.add(m[1]!);
    } catch {
      // Closed between the listing and the read.
    }
  }
  const ports = new Set<number>();
  for (const table of ["tcp", "tcp6"]) {
    const lines = readFileSync(`/proc/${pid}/net/${table}`, "utf8").trim().split("\n").slice(1);
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f[3] === LISTEN && inodes.has(f[9]!))
        ports.add(Number.parseInt(f[1]!.split(":")[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
