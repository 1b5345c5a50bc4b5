// The fleet's API server process (see api-server.ts): envtest holding the seeded world, answering
// the harness's commands over IPC. Its argument is a ChildSetup as JSON.

import { performance } from "node:perf_hooks";
import { type RequestLogEntry, seededRandom, startEnvtest } from "@replica-mirror/envtest";
import { REGISTRY_NAME, REGISTRY_NS } from "../../test/support/world.ts";
import { type Handlers, serveCommands } from "../command-child.ts";
import type { ChildSetup, Commands, Ready, Req } from "./api-server.ts";
import {
  appSecretsJsonBytes,
  seedWorld,
  touchApp,
  touchUnrelated,
  writeRegistryOf,
} from "./world.ts";

const setup = JSON.parse(process.argv[2] ?? "{}") as ChildSetup;
const { size } = setup;
// A watch cache that holds a few minutes of writes, as etcd's five-minute compaction would.
const envtest = await startEnvtest({
  historySize: 10_000,
  requestLog: { keep: setup.keepEntries },
});
const facts = await seedWorld(envtest, size);
const unrelated = facts.unrelated;
const random = seededRandom(7);
let writes = 0;
let elu = performance.eventLoopUtilization();
let cpu = process.cpuUsage();

function req(e: RequestLogEntry): Req {
  const registry =
    e.namespace === REGISTRY_NS &&
    (e.name === REGISTRY_NAME ||
      (e.fieldSelector ?? "").includes(`metadata.name=${REGISTRY_NAME}`));
  const timeout = Number(e.query.timeoutSeconds);
  return {
    client: e.client,
    verb: e.verb,
    time: e.time,
    objects: e.objects,
    bytes: e.bytes,
    continued: e.query.continue !== undefined,
    streamedList: e.verb === "watch" && e.query.sendInitialEvents === "true" && e.status === 200,
    registry,
    byName: e.verb === "list" && /(^|,)metadata\.name=/.test(e.fieldSelector ?? ""),
    stream:
      e.verb === "get" ? "get" : `${e.path}?${e.labelSelector ?? ""}&${e.fieldSelector ?? ""}`,
    ...(e.durationMs === undefined ? {} : { durationMs: e.durationMs }),
    ...(e.status === undefined ? {} : { status: e.status }),
    ...(e.listRead === undefined ? {} : { listRead: e.listRead }),
    ...(e.watchError === undefined ? {} : { watchError: e.watchError }),
    ...(Number.isFinite(timeout) && e.verb === "watch" ? { timeoutSeconds: timeout } : {}),
    ...(e.resourceVersion === undefined ? {} : { resourceVersion: e.resourceVersion }),
  };
}

/** Writes at the given rates for `durationMs`, in 100 ms steps. */
async function churn(a: Commands["churn"][0]): Promise<Commands["churn"][1]> {
  const done = { referenced: 0, unrelated: 0 };
  const owed = { referenced: 0, unrelated: 0 };
  const start = performance.now();
  for (let step = 1; performance.now() - start < a.durationMs; step++) {
    owed.referenced += a.referencedPerSecond / 10;
    owed.unrelated += a.unrelatedPerSecond / 10;
    for (; owed.referenced >= 1; owed.referenced--, done.referenced++)
      touchApp(envtest, Math.floor(random() * size.apps), size.valueBytes, `c${writes++}`);
    for (; owed.unrelated >= 1 && unrelated > 0; owed.unrelated--, done.unrelated++)
      touchUnrelated(envtest, Math.floor(random() * unrelated), size.valueBytes, `c${writes++}`);
    const wait = start + step * 100 - performance.now();
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
  }
  return done;
}

const handlers: Handlers<Commands> = {
  clear: async () => {
    envtest.requests.clear();
    elu = performance.eventLoopUtilization();
    cpu = process.cpuUsage();
    return { now: Date.now() };
  },
  collect: async () => {
    const used = process.cpuUsage(cpu);
    return {
      summary: envtest.requests.summary(),
      requests: envtest.requests.entries().map(req),
      eventLoopBusy: performance.eventLoopUtilization(elu).utilization,
      cpuMs: (used.user + used.system) / 1000,
      now: Date.now(),
    };
  },
  registry: async (a) => {
    const written = writeRegistryOf(envtest, a.apps);
    return {
      resourceVersion: written.resourceVersion,
      registryBytes: written.bytes,
      appSecretsBytes: appSecretsJsonBytes(envtest, a.from, a.apps),
      now: Date.now(),
    };
  },
  touch: async (a) => ({
    resourceVersion: touchApp(envtest, a.app, size.valueBytes, `t${writes++}`),
    now: Date.now(),
  }),
  churn,
  restart: async (a) => {
    const downAt = Date.now();
    await envtest.restart({ downMs: a.downMs, down: "refuse" });
    return { downAt, upAt: Date.now() };
  },
  throttle: async (a) => {
    envtest.faults.throttle({ verbs: ["list", "watch"], ...a });
    const from = Date.now();
    return { from, until: from + a.forMs };
  },
  featureGates: async (a) => ({ WatchList: envtest.setFeatureGates(a).WatchList }),
  endWatches: async () => ({ watches: envtest.faults.endWatches(), now: Date.now() }),
  reset: async () => {
    envtest.faults.reset();
    return { now: Date.now() };
  },
};

serveCommands(handlers, { url: envtest.url, facts } satisfies Ready, () => envtest.close());
