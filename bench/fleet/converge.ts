// When each replica shows the expected state, read through its status API on the ops port: every
// replica is polled on its own until its answer matches, or the wait runs out.

import { Agent } from "node:http";
import { get } from "../../test/support/http.ts";
import type { Replica } from "./replicas.ts";

/** Whether the replica with this ops port shows the expected state. */
export type Probe = (opsPort: number) => Promise<boolean>;

/** One keep-alive connection per replica, so the polling does not open a socket per probe. */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

async function json(port: number, path: string): Promise<unknown> {
  const r = await get(port, path, {}, { agent, timeoutMs: 5_000 });
  return r.status === 200 ? (JSON.parse(r.body) as unknown) : undefined;
}

/** `/v1/snapshot` shows `apps` Apps, every one ready. */
export function allReady(apps: number): Probe {
  return async (port) => {
    const s = (await json(port, "/v1/snapshot")) as
      | { synced?: boolean; apps?: number; readyApps?: number }
      | undefined;
    return s?.synced === true && s.apps === apps && s.readyApps === apps;
  };
}

/** `/v1/apps/{app}` shows its Secret at `resourceVersion` or later. */
export function secretAtLeast(app: string, resourceVersion: string): Probe {
  return async (port) => {
    const a = (await json(port, `/v1/apps/${app}`)) as
      | { secretResourceVersion?: string | null }
      | undefined;
    const rv = a?.secretResourceVersion;
    return typeof rv === "string" && Number(rv) >= Number(resourceVersion);
  };
}

/** Both probes hold. */
export function both(a: Probe, b: Probe): Probe {
  return async (port) => (await a(port)) && (await b(port));
}

/**
 * Polls every replica every `intervalMs` until its probe holds; resolves to the time (ms since the
 * epoch) each one first did, by client, or null for those still not there after `timeoutMs`.
 */
export async function untilConverged(
  replicas: readonly Replica[],
  probe: Probe,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<Map<string, number | null>> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 200;
  const at = new Map<string, number | null>();
  await Promise.all(
    replicas.map(async (r) => {
      for (;;) {
        const ok = await probe(r.opsPort).catch(() => false);
        if (ok) {
          at.set(r.client, Date.now());
          return;
        }
        if (Date.now() > deadline || r.command.exited() !== null) {
          at.set(r.client, null);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, interval));
      }
    }),
  );
  return at;
}

/** Drops the polling connections (at the end of the run). */
export function closeProbes(): void {
  agent.destroy();
}
