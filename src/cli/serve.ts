import type { FastifyInstance } from "fastify";
import { type Logger, pino } from "pino";
import { createDataServer } from "../http/data-server.ts";
import { createMetrics } from "../http/metrics.ts";
import { createOpsServer } from "../http/ops-server.ts";
import { createListWatch } from "../kube/client.ts";
import { createKubeTransport } from "../kube/http-transport.ts";
import { loadKubeConfig } from "../kube/kubeconfig.ts";
import type { SecretScope } from "../mirror/fetch-secrets.ts";
import { logObserver, observeAll } from "../mirror/log-observer.ts";
import { Mirror } from "../mirror/mirror.ts";
import { err, ok, type Result } from "../result.ts";
import { SnapshotHolder } from "../snapshot/holder.ts";
import type { Address, ServeConfig } from "./config.ts";

/** A running sidecar. */
export interface Sidecar {
  readonly holder: SnapshotHolder;
  readonly mirror: Mirror;
  /** Where the listeners ended up (a port 0 in the config is resolved here). */
  readonly data: Address;
  readonly ops: Address;
  /** Stops accepting, lets in-flight requests finish, stops the watches. */
  close(): Promise<void>;
}

/** How long in-flight requests get on shutdown before their connections are cut. */
const DRAIN_MS = 3_000;

/** Starts the mirror and both listeners. A failure to start is a value (exit 1), not a throw. */
export async function startSidecar(
  config: ServeConfig,
  log: Logger = makeLogger(config.logLevel),
): Promise<Result<Sidecar, string>> {
  log.info(
    { config: { ...config, kubeconfig: config.kubeconfig ?? null } },
    "starting replica-mirror",
  );
  const loaded = loadKubeConfig(config.kubeconfig);
  if (!loaded.ok) return err(loaded.error.message);
  const transport = createKubeTransport(loaded.value.kubeConfig);
  if (!transport.ok) return err(transport.error.message);
  log.info({ server: transport.value.server, source: loaded.value.source }, "API server");

  const labelSelector = config.secretSelector;
  const scopes: SecretScope[] =
    config.secretNamespaces.length === 0
      ? [
          {
            namespace: null,
            listWatch: createListWatch(transport.value, {
              ...(labelSelector ? { labelSelector } : {}),
            }),
          },
        ]
      : config.secretNamespaces.map((namespace) => ({
          namespace,
          listWatch: createListWatch(transport.value, {
            namespace,
            ...(labelSelector ? { labelSelector } : {}),
          }),
        }));
  const holder = new SnapshotHolder();
  const metrics = createMetrics();
  const mirror = new Mirror({
    registry: {
      listWatch: createListWatch(transport.value, {
        namespace: config.registryNamespace,
        fieldSelector: `metadata.name=${config.registryName}`,
      }),
      namespace: config.registryNamespace,
      name: config.registryName,
      key: config.registryKey,
    },
    secrets: { scopes, ...(labelSelector ? { labelSelector } : {}) },
    holder,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    observer: observeAll(metrics.observer, logObserver(log)),
  });

  // The first lists go out before the listeners are set up: start-up is bounded by them.
  mirror.start();
  const data = createDataServer({ holder, logger: log, metrics });
  const ops = createOpsServer({ holder, metrics });
  let dataAddress: Address;
  let opsAddress: Address;
  try {
    dataAddress = await listen(data, config.listen);
    opsAddress = await listen(ops, config.opsListen);
  } catch (e) {
    await Promise.allSettled([data.close(), ops.close(), mirror.stop()]);
    transport.value.close();
    return err(`cannot listen: ${(e as Error).message}`);
  }
  log.info({ listen: dataAddress, opsListen: opsAddress }, "listening");

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      const cut = setTimeout(() => {
        data.server.closeAllConnections();
        ops.server.closeAllConnections();
      }, DRAIN_MS);
      await Promise.allSettled([data.close(), ops.close(), mirror.stop()]);
      clearTimeout(cut);
      transport.value.close();
      log.info("stopped");
    })();
    return closing;
  };
  return ok({ holder, mirror, data: dataAddress, ops: opsAddress, close });
}

async function listen(server: FastifyInstance, address: Address): Promise<Address> {
  await server.listen({ host: address.host, port: address.port });
  const bound = server.server.address();
  return typeof bound === "object" && bound !== null
    ? { host: address.host, port: bound.port }
    : address;
}

export function makeLogger(level: ServeConfig["logLevel"]): Logger {
  return pino({ level, base: { name: "replica-mirror" } });
}

/** Runs `serve` until SIGTERM or SIGINT; exits 0 after a clean stop, at the latest after 5 s. */
export async function runServe(config: ServeConfig): Promise<number> {
  const log = makeLogger(config.logLevel);
  const started = await startSidecar(config, log);
  if (!started.ok) {
    log.fatal({ error: started.error }, "cannot start");
    return 1;
  }
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, "shutting down");
      const force = setTimeout(() => resolve(0), 5_000);
      force.unref();
      void started.value.close().then(() => {
        clearTimeout(force);
        resolve(0);
      });
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}
