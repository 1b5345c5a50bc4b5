// The data-plane suite's API server process (see cluster-process.ts): `startCluster`'s envtest,
// writing what the suite sends over IPC. Its argument is a ClusterSetup as JSON.

import { startCluster, withRegistry, yieldToLoop } from "../cluster.ts";
import { type Handlers, serveCommands, sharedClockMs } from "../command-child.ts";
import type { ClusterCommands, ClusterReady, ClusterSetup } from "./cluster-process.ts";

const setup = JSON.parse(process.argv[2] ?? "{}") as ClusterSetup;
const cluster = await startCluster(setup.apps, setup.valueBytes, setup.registry, setup.keys);

const handlers: Handlers<ClusterCommands> = {
  write: async ({ secrets }) => {
    const startedMs = sharedClockMs();
    for (const [i, secret] of secrets.entries()) {
      cluster.envtest.apply(secret);
      // Many at once (the TLS Secrets): yielding so that watch streams keep up.
      if (i % 200 === 199) await yieldToLoop();
    }
    return { startedMs };
  },
  registry: async ({ namespace, options }) => {
    withRegistry(cluster, namespace, options);
    return {};
  },
};

serveCommands(
  handlers,
  {
    kubeconfigPath: cluster.kubeconfigPath,
    registryNamespace: cluster.registryNamespace,
  } satisfies ClusterReady,
  () => cluster.close(),
);
