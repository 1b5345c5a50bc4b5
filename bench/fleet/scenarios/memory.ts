// One replica's memory while it lists every Secret of the cluster for the first time: its resident
// set sampled from /proc every 50 ms from the spawn (and the kernel's own high-water mark), against
// what it holds once synced. Pages processed as they arrive keep the peak near what is held;
// pages accumulated (or decoded whole) do not.
//
// "Held" is the RSS after collections that give free heap pages back (memory-probe.ts, preloaded
// with `--expose-gc`): V8 keeps the heap pages it once grew into, so the RSS a while after sync
// still counts the list's garbage and says little about what the replica needs. Both are reported.

import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { ApiServer } from "../api-server.ts";
import { allReady, untilConverged } from "../converge.ts";
import type { FleetConfig } from "../options.ts";
import { Fleet } from "../replicas.ts";
import type { MemoryResult } from "../results.ts";

const SAMPLE_MS = 50;
/** How long the replica is left alone after sync before the "after sync" readings. */
const IDLE_MS = 15_000;
const PROBE = fileURLToPath(new URL("../memory-probe.ts", import.meta.url));

/** VmRSS and VmHWM of a process, in bytes; undefined once it is gone. */
async function rssOf(pid: number): Promise<{ rss: number; hwm: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kib = (key: string) =>
      Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
    return { rss: kib("VmRSS") * 1024, hwm: kib("VmHWM") * 1024 };
  } catch {
    return undefined;
  }
}

/** The memory probe's answer: RSS and heap after collections that release free pages. */
function heldMemory(fleet: Fleet): Promise<{ rss: number; heapUsed: number }> {
  const child = fleet.replicas()[0]?.command.child;
  if (child === undefined) return Promise.reject(new Error("no replica"));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("memory probe did not answer")), 30_000);
    child.once("message", (m) => {
      clearTimeout(t);
      resolve(m as { rss: number; heapUsed: number });
    });
    child.send("held");
  });
}

/** Starts one replica alone and samples its memory until a while after it synced. */
export async function memoryDuringInitialList(
  api: ApiServer,
  config: FleetConfig,
  log: (line: string) => void,
): Promise<MemoryResult> {
  log("phase: memory of one replica during its initial list");
  const fleet = await Fleet.create(
    {
      apiUrl: api.url,
      extraArgs: [],
      prefix: "memory",
      startTimeoutMs: 60_000,
      artifact: config.artifact,
      entry: config.entry,
      nodeArgs: ["--expose-gc", "--import", PROBE],
      ipc: true,
    },
    1,
  );
  const samples: { t: number; rss: number }[] = [];
  let hwm = 0;
  let sampling = true;
  let sampler: Promise<void> = Promise.resolve();
  const spawnedAt = Date.now();
  try {
    await fleet.start([0], (pid) => {
      sampler = (async () => {
        while (sampling) {
          const m = await rssOf(pid);
          if (m === undefined) return;
          samples.push({ t: Date.now() - spawnedAt, rss: m.rss });
          hwm = m.hwm;
          await sleep(SAMPLE_MS);
        }
      })();
    });
    const converged = await untilConverged(fleet.replicas(), allReady(config.apps), {
      timeoutMs: config.convergeTimeoutSeconds * 1000,
      intervalMs: 100,
    });
    const syncedAt = [...converged.values()][0] ?? null;
    await sleep(IDLE_MS);
    sampling = false;
    await sampler;
    const idle = samples.at(-1)?.rss ?? 0;
    const held = await heldMemory(fleet);
    const peak = Math.max(hwm, ...samples.map((s) => s.rss));
    const ratio = held.rss > 0 ? peak / held.rss : Number.POSITIVE_INFINITY;
    const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    log(
      `  peak ${mib(peak)}; after sync ${mib(idle)} idle, ${mib(held.rss)} held ` +
        `(heap ${mib(held.heapUsed)}): ${ratio.toFixed(2)}×`,
    );
    return {
      secrets: api.facts.secrets,
      peakRssBytes: peak,
      hwmBytes: hwm,
      rssIdleBytes: idle,
      rssAfterSyncBytes: held.rss,
      heapAfterSyncBytes: held.heapUsed,
      syncMs: syncedAt === null ? null : syncedAt - spawnedAt,
      samples: samples.filter((_, i) => i % 2 === 0),
      targets: [
        {
          what: `initial list of ${Math.round(api.facts.secrets / 1000)}k Secrets, one replica: peak RSS`,
          target: "≤ 1.3× RSS after sync",
          figure: `${ratio.toFixed(2)}× (${mib(peak)} peak, ${mib(held.rss)} held after sync; ${(peak / idle).toFixed(2)}× the ${mib(idle)} resident ${IDLE_MS / 1000} s after sync)`,
          met: ratio <= 1.3,
        },
      ],
    };
  } finally {
    sampling = false;
    await fleet.close();
  }
}
