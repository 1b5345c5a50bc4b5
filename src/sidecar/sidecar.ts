import type { FastifyInstance } from "fastify";
import { type Logger, pino } from "pino";
import { createDataServer } from "../http/data-server.ts";
import { createMetrics } from "../http/metrics.ts";
import { createOpsServer } from "../http/ops-server.ts";
import { createListWatch } from "../kube/client.ts";
import type { Clock } from "../kube/clock.ts";
import { createKubeTransport, type KubeTransport } from "../kube/http-transport.ts";
import { loadKubeConfig } from "../kube/kubeconfig.ts";
import type { SecretScope } from "../mirror/fetch-secrets.ts";
import { logObserver, observeAll } from "../mirror/log-observer.ts";
import { Mirror, type MirrorOptions } from "../mirror/mirror.ts";
import type { MirrorObserver } from "../mirror/observer.ts";
import { err, ok, type Result } from "../result.ts";
import { SnapshotHolder } from "../snapshot/holder.ts";
import type { Address, SidecarConfig } from "./config.ts";

/** A running sidecar. */
export interface Sidecar {
  readonly config: SidecarConfig;
  readonly holder: SnapshotHolder;
  readonly mirror: Mirror;
  /** Where the listeners ended up (a port 0 in the config is resolved here). */
  readonly data: Address;
  readonly ops: Address;
  /** Stops accepting, lets in-flight requests finish (at most `drainMs`), stops the watches. */
  close(): Promise<void>;
}

/**
 * What tests and benchmarks change about a sidecar; production passes none of it. Timings here
 * keep the production policy's shape and only shorten it, so a test converges in test time.
 */
export interface SidecarOptions {
  /** Default: a JSON logger to stdout at the config's level. */
  readonly logger?: Logger;
  /** Told everything the mirror reports, beside the metrics and the log. */
  readonly observer?: MirrorObserver;
  readonly clock?: Clock;
  readonly random?: () => number;
  /** Backoff and deadlines of every reflector. */
  readonly reflector?: MirrorOptions["reflector"];
  /** How long in-flight requests get on shutdown before their connections are cut. */
  readonly drainMs?: number;
}

const DRAIN_MS = 3_000;

/** The sidecar's logger: JSON lines on stdout, named. */
export function makeLogger(level: SidecarConfig["logLevel"]): Logger {
  return pino({ level, base: { name: "replica-mirror" } });
}

/**
 * Assembles one sidecar from its config: the API-server transport, one ListWatch for the Registry
 * Secret and one per App Secret scope, the mirror feeding the holder, metrics, and both
 * listeners. The first lists go out before the listeners are set up: start-up is bounded by
 * them. A failure to start (kubeconfig, listen) is a value, and leaves nothing running.
 */
export async function startSidecar(
  config: SidecarConfig,
  options: SidecarOptions = {},
): Promise<Result<Sidecar, string>> {
  const log = options.logger ?? makeLogger(config.logLevel);
  log.info(
    { config: { ...config, kubeconfig: config.kubeconfig ?? null } },
    "starting replica-mirror",
  );
  const loaded = loadKubeConfig(config.kubeconfig);
  if (!loaded.ok) return err(loaded.error.message);
  const created = createKubeTransport(loaded.value.kubeConfig);
  if (!created.ok) return err(created.error.message);
  const transport = created.value;
  log.info({ server: transport.server, source: loaded.value.source }, "API server");

  const holder = new SnapshotHolder();
  const metrics = createMetrics();
  const observers = [metrics.observer, logObserver(log)];
  if (options.observer !== undefined) observers.push(options.observer);
  const mirror = new Mirror({
    registry: {
      listWatch: createListWatch(transport, {
        namespace: config.registryNamespace,
        fieldSelector: `metadata.name=${config.registryName}`,
      }),
      namespace: config.registryNamespace,
      name: config.registryName,
      key: config.registryKey,
    },
    secrets: {
      scopes: secretScopes(transport, config),
      ...(config.secretSelector === undefined ? {} : { labelSelector: config.secretSelector }),
    },
    holder,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    observer: observeAll(...observers),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.random === undefined ? {} : { random: options.random }),
    ...(options.reflector === undefined ? {} : { reflector: options.reflector }),
  });
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
    transport.close();
    return err(`cannot listen: ${(e as Error).message}`);
  }
  log.info({ listen: dataAddress, opsListen: opsAddress }, "listening");

  const drainMs = options.drainMs ?? DRAIN_MS;
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      const cut = setTimeout(() => {
        data.server.closeAllConnections();
        ops.server.closeAllConnections();
      }, drainMs);
      await Promise.allSettled([data.close(), ops.close(), mirror.stop()]);
      clearTimeout(cut);
      transport.close();
      log.info("stopped");
    })();
    return closing;
  };
  return ok({ config, holder, mirror, data: dataAddress, ops: opsAddress, close });
}

/** One cluster-wide scope, or one per namespace of `--secret-namespaces`; each with the selector. */
function secretScopes(transport: KubeTransport, config: SidecarConfig): SecretScope[] {
  const selector =
    config.secretSelector === undefined ? {} : { labelSelector: config.secretSelector };
  if (config.secretNamespaces.length === 0)
    return [{ namespace: null, listWatch: createListWatch(transport, selector) }];
  return config.secretNamespaces.map((namespace) => ({
    namespace,
    listWatch: createListWatch(transport, { namespace, ...selector }),
  }));
}

async function listen(server: FastifyInstance, address: Address): Promise<Address> {
  await server.listen({ host: address.host, port: address.port });
  const bound = server.server.address();
  return typeof bound === "object" && bound !== null
    ? { host: address.host, port: bound.port }
    : address;
}
