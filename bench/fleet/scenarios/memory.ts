// One replica's memory while it lists every Secret of the cluster for the first time: its resident
// set sampled from /proc every 50 ms from the spawn, its peak against what it holds once synced.
// Pages processed as they arrive keep the peak near the synced size; pages accumulated do not.

import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { ApiServer } from "../api-server.ts";
import { allReady, untilConverged } from "../converge.ts";
import type { FleetConfig } from "../options.ts";
import { Fleet } from "../replicas.ts";
import type { MemoryResult } from "../results.ts";

const SAMPLE_MS = 50;
/** How long after sync the replica is left alone before its RSS counts as "after sync". */
const SETTLE_MS = 5_000;

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

/** Starts one replica alone and samples its memory until a while after it synced. */
export async function memoryDuringInitialList(
  api: ApiServer,
  config: FleetConfig,
  log: (line: string) => void,
): Promise<MemoryResult> {
  log("phase: memory of one replica during its initial list");
  const fleet = await Fleet.create(
    { apiUrl: api.url, extraArgs: [], prefix: "memory", startTimeoutMs: 60_000 },
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
    await sleep(SETTLE_MS);
    sampling = false;
    await sampler;
    // The last second of samples: the resident set the replica keeps once synced.
    const tail = samples.filter((s) => s.t >= (samples.at(-1)?.t ?? 0) - 1000).map((s) => s.rss);
    const after = tail.sort((a, b) => a - b)[Math.floor(tail.length / 2)] ?? 0;
    const peak = Math.max(0, ...samples.map((s) => s.rss));
    const ratio = after > 0 ? peak / after : Number.POSITIVE_INFINITY;
    const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    log(`  peak ${mib(peak)} (VmHWM ${mib(hwm)}), after sync ${mib(after)}: ${ratio.toFixed(2)}×`);
    return {
      secrets: api.facts.secrets,
      peakRssBytes: peak,
      hwmBytes: hwm,
      rssAfterSyncBytes: after,
      syncMs: syncedAt === null ? null : syncedAt - spawnedAt,
      samples: samples.filter((_, i) => i % 2 === 0),
      targets: [
        {
          what: `initial list of ${Math.round(api.facts.secrets / 1000)}k Secrets, one replica: peak RSS`,
          target: "≤ 1.3× RSS after sync",
          figure: `${ratio.toFixed(2)}× (${mib(peak)} peak, ${mib(after)} after sync)`,
          met: ratio <= 1.3,
        },
      ],
    };
  } finally {
    sampling = false;
    await fleet.close();
  }
}
