import { execFileSync } from "node:child_process";
// The machine a run measures on: what it is, and how busy the neighbours keep it. Two shared cores
// move every figure, so a full run waits for a quiet moment (bounded) and records the load.

import os from "node:os";

/** One line naming the machine and Node. */
export function machineLine(): string {
  const cpus = os.cpus();
  return `node ${process.version}, ${cpus.length}x ${cpus[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
}

/** The 1-minute load average. */
export function load1(): number {
  return os.loadavg()[0]!;
}

/**
 * Waits until the 1-minute load average is below `below`, polling every 30 s for at most
 * `maxMs`; resolves to the load it started at (whether or not it got quiet).
 */
export async function waitForQuiet(below: number, maxMs: number): Promise<number> {
  const deadline = performance.now() + maxMs;
  while (load1() >= below && performance.now() < deadline) {
    console.error(`bench: load average ${load1().toFixed(2)} >= ${below}, waiting 30 s`);
    await new Promise((r) => setTimeout(r, 30_000));
  }
  return load1();
}

/** Load averages seen while a suite ran: sampled every 5 s. */
export class LoadSampler {
  readonly #samples: number[] = [load1()];
  readonly #timer = setInterval(() => this.#samples.push(load1()), 5_000);

  /** Stops sampling; min and max of the 1-minute load average seen. */
  stop(): { min: number; max: number } {
    clearInterval(this.#timer);
    this.#samples.push(load1());
    return { min: Math.min(...this.#samples), max: Math.max(...this.#samples) };
  }
}

/** The commit measured: its short hash, `+changes` when src/ differs from it, or "unknown". */
export function gitCommit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "src"], { encoding: "utf8" });
    return dirty.trim() === "" ? sha : `${sha}+changes`;
  } catch {
    return "unknown";
  }
}
