// Issue 45 item 5, as an operator's cluster behaves: a fleet of sidecars against a standalone API
// server (fake-api.ts) that restarts losing its watch history, so that every reflector must relist,
// then answers every list 429 with a Retry-After for a while; a referenced Secret is emptied as the
// throttling ends. Each replica must have listed again, and show the emptied Secret, within R + 2 s
// of the end (R the Retry-After).

import { setTimeout as sleep } from "node:timers/promises";
import { gzipSync } from "node:zlib";
import {
  REGISTRY_KEY,
  REGISTRY_NAME,
  REGISTRY_NS,
  registryDoc,
} from "../../../test/support/world.ts";
import { allReady, type Probe, untilConverged } from "../converge.ts";
import { Fleet } from "../replicas.ts";
import { FakeApi, type LoggedRequest } from "./fake-api.ts";
import { SecretStore } from "./secrets.ts";

export interface ThrottledRestartConfig {
  readonly replicas: number;
  readonly apps: number;
  /** Every Secret of the namespace, the Registry included. */
  readonly secrets: number;
  readonly valueBytes: number;
  /** How long the restarting server still accepts connections but ends every watch at once. */
  readonly closingMs: number;
  readonly downMs: number;
  readonly throttleSeconds: number;
  readonly retryAfterSeconds: number;
  /** The server serves streaming lists (else it refuses them 422). */
  readonly watchList: boolean;
  /** Watches are answered 429 too while throttling, as API Priority and Fairness may. */
  readonly throttleWatches: boolean;
  readonly convergeTimeoutSeconds: number;
  readonly artifact: "dist" | "src";
}

/** One replica's figures, in ms after the throttling ended (null: not within the wait). */
export interface ReplicaFigures {
  readonly client: string;
  readonly firstGoodListMs: number | null;
  readonly registryListedMs: number | null;
  readonly emptiedSeenMs: number | null;
  readonly throttled: number;
  readonly expired: number;
  /** The shortest wait after a 429 before the same reflector's next request. */
  readonly shortestRetryMs: number | null;
  /** From the last 429 of the App Secrets' reflector to its next list. */
  readonly afterLastRefusalMs: number | null;
  readonly met: boolean;
  /** Its requests from the restart on: `t` in ms after the throttling ended. */
  readonly requests: readonly {
    t: number;
    verb: string;
    registry: boolean;
    status?: number;
    watchError?: number;
    listedAt?: number;
  }[];
}

export interface ThrottledRestartResult {
  readonly restart: { downAt: number; upAt: number; throttledUntil: number; emptiedAt: number };
  readonly goalMs: number;
  readonly replicas: readonly ReplicaFigures[];
  readonly met: boolean;
}

const appSecretName = (i: number) => `app-${i}-credentials`;
const value = (i: number, bytes: number) => `v0:${i}:`.padEnd(bytes, "x").slice(0, bytes);

/** The namespace: the Registry, its Apps' Secrets, and unrelated Secrets up to `secrets`. */
export function seed(c: ThrottledRestartConfig): SecretStore {
  const store = new SecretStore(REGISTRY_NS);
  for (let i = 0; i < c.apps; i++)
    store.put(appSecretName(i), { token: value(i, c.valueBytes) }, { app: "true" });
  for (let j = 0; j < c.secrets - c.apps - 1; j++)
    store.put(`sh.helm.release.v1.release-${j}.v1`, { release: value(j, c.valueBytes) });
  const apps = Array.from({ length: c.apps }, (_, i) => ({
    name: `app-${i}`,
    hostnames: [`app-${i}.example.com`],
    secret: appSecretName(i),
    upstream: `http://app-${i}.${REGISTRY_NS}.svc.cluster.local:8080`,
  }));
  const doc = gzipSync(JSON.stringify(registryDoc(apps)));
  store.put(REGISTRY_NAME, { [REGISTRY_KEY]: doc });
  return store;
}

/** `/v1/apps/app-0` shows its Secret at `resourceVersion` or later, without the key. */
function emptied(resourceVersion: string): Probe {
  return async (port) => {
    const r = await fetch(`http://127.0.0.1:${port}/v1/apps/app-0`).catch(() => undefined);
    if (r?.status !== 200) return false;
    const a = (await r.json()) as { secretResourceVersion?: string | null; reason?: string | null };
    return (
      Number(a.secretResourceVersion ?? 0) >= Number(resourceVersion) && a.reason === "key-missing"
    );
  };
}

/** One replica's figures from the server's log. */
function figures(
  log: readonly LoggedRequest[],
  client: string,
  end: number,
  retryAfterMs: number,
  emptiedSeen: number | null,
  goalMs: number,
  since: number,
): ReplicaFigures {
  const mine = log.filter((r) => r.client === client && r.verb !== "get");
  const lists = (registry: boolean) =>
    mine.filter((r) => r.registry === registry && (r.verb === "list" || r.verb === "watch-list"));
  const firstListed = (registry: boolean) => {
    const at = lists(registry).flatMap((r) =>
      r.listedAt !== undefined && r.listedAt >= end ? [r.listedAt] : [],
    );
    return at.length === 0 ? null : Math.min(...at) - end;
  };
  const apps = lists(false);
  // Every 429 of a reflector (the App Secrets' or the Registry's) and its next request.
  let shortest: number | null = null;
  for (const registry of [false, true]) {
    const l = mine.filter((r) => r.registry === registry);
    for (let i = 0; i + 1 < l.length; i++)
      if (l[i]!.status === 429) {
        const gap = l[i + 1]!.time - l[i]!.time;
        shortest = shortest === null ? gap : Math.min(shortest, gap);
      }
  }
  const lastRefusal = apps.findLastIndex((r) => r.status === 429);
  const afterLast = lastRefusal >= 0 ? apps[lastRefusal + 1] : undefined;
  const firstGoodListMs = firstListed(false);
  const emptiedSeenMs = emptiedSeen === null ? null : emptiedSeen - end;
  return {
    client,
    firstGoodListMs,
    registryListedMs: firstListed(true),
    emptiedSeenMs,
    throttled: mine.filter((r) => r.status === 429).length,
    expired: mine.filter((r) => r.watchError === 410).length,
    shortestRetryMs: shortest,
    afterLastRefusalMs: afterLast === undefined ? null : afterLast.time - apps[lastRefusal]!.time,
    met:
      firstGoodListMs !== null &&
      firstGoodListMs <= goalMs &&
      emptiedSeenMs !== null &&
      emptiedSeenMs <= goalMs &&
      (shortest === null || shortest >= retryAfterMs),
    requests: mine
      .filter((r) => r.time >= since)
      .map((r) => ({
        t: r.time - end,
        verb: r.verb,
        registry: r.registry,
        ...(r.status === undefined ? {} : { status: r.status }),
        ...(r.watchError === undefined ? {} : { watchError: r.watchError }),
        ...(r.listedAt === undefined ? {} : { listedAt: r.listedAt - end }),
      })),
  };
}

/** Runs the scenario once; `log` hears the progress. */
export async function throttledRestart(
  c: ThrottledRestartConfig,
  log: (line: string) => void,
): Promise<ThrottledRestartResult> {
  const store = seed(c);
  const api = new FakeApi(store, {
    watchList: c.watchList,
    throttleWatches: c.throttleWatches,
    bookmarkIntervalMs: 10_000,
  });
  const url = await api.listen();
  log(`API server at ${url}: ${c.secrets} Secrets in ${REGISTRY_NS}, ${c.apps} Apps`);
  const fleet = await Fleet.create(
    {
      apiUrl: url,
      extraArgs: [`--secret-namespaces=${REGISTRY_NS}`],
      prefix: "throttled",
      startTimeoutMs: 180_000,
      artifact: c.artifact,
    },
    c.replicas,
  );
  try {
    await fleet.start(Array.from({ length: c.replicas }, (_, i) => i));
    const ready = await untilConverged(fleet.replicas(), allReady(c.apps), { timeoutMs: 180_000 });
    const notReady = [...ready.values()].filter((t) => t === null).length;
    if (notReady > 0) throw new Error(`${notReady} replicas not ready after 180 s`);
    log(`${c.replicas} replicas ready; restarting the API server`);
    await sleep(2_000);
    const retryAfterMs = c.retryAfterSeconds * 1000;
    const restart = api.restart({
      closingMs: c.closingMs,
      downMs: c.downMs,
      throttleMs: c.throttleSeconds * 1000,
      retryAfterSeconds: c.retryAfterSeconds,
    });
    await sleep(Math.max(0, restart.throttledUntil - Date.now()));
    // As the throttling ends, the Secret loses its key; every replica must show it.
    const resourceVersion = store.put(appSecretName(0), {}, { app: "true" });
    const emptiedAt = Date.now();
    log(`throttling ended; ${appSecretName(0)} emptied at resourceVersion ${resourceVersion}`);
    const seen = await untilConverged(fleet.replicas(), emptied(resourceVersion), {
      timeoutMs: c.convergeTimeoutSeconds * 1000,
      intervalMs: 100,
    });
    const end = restart.throttledUntil;
    const goalMs = retryAfterMs + 2000;
    // Lists that end after the last replica converged but within the goal count too.
    await sleep(Math.max(0, end + goalMs + 1000 - Date.now()));
    const replicas = fleet
      .replicas()
      .map((r) =>
        figures(
          api.log,
          r.client,
          end,
          retryAfterMs,
          seen.get(r.client) ?? null,
          goalMs,
          restart.downAt,
        ),
      );
    return {
      restart: { ...restart, emptiedAt },
      goalMs,
      replicas,
      met: replicas.every((r) => r.met),
    };
  } finally {
    await fleet.close();
    await api.close();
  }
}
