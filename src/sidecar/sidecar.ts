import type { Server } from "node:http";
import type { Worker } from "node:worker_threads";
import { type Logger, pino } from "pino";
import { DEFAULT_RETRY_AFTER } from "../answers/route-answer.ts";
import { type Clock, sleep, systemClock } from "../clock.ts";
import { createListWatch } from "../kube/rest/client.ts";
import { loadKubeConfig } from "../kube/rest/kubeconfig.ts";
import { createKubeTransport, type KubeTransport } from "../kube/rest/transport.ts";
import type { SecretScope } from "../mirror/fetch-secrets.ts";
import { Mirror, type MirrorOptions, type SnapshotSink } from "../mirror/mirror.ts";
import { type MirrorObserver, observeAll } from "../mirror/observer.ts";
import { logObserver } from "../ops/log-observer.ts";
import { createMetrics } from "../ops/metrics.ts";
import { createOpsServer } from "../ops/ops-server.ts";
import { createPushMetrics } from "../ops/push-metrics.ts";
import { rolledBackObserver } from "../ops/rolled-back-log.ts";
import { err, ok, type Result } from "../result.ts";
import { startDataThread } from "../route/data-thread.ts";
import { dataListenerLimits, isLoopbackHost } from "../route/listener-limits.ts";
import { SnapshotHolder } from "../snapshot/holder.ts";
import type { Address, SidecarConfig } from "./config.ts";
import { openLastGoodState } from "./last-good-state.ts";
import { startPushers, targetOf } from "./push-targets.ts";
import { RegistryThread } from "./registry-thread.ts";
import { startStateKeeper } from "./state-keeper.ts";

/** A running sidecar. */
export interface Sidecar {
  readonly config: SidecarConfig;
  readonly holder: SnapshotHolder;
  readonly mirror: Mirror;
  /** Where the listeners ended up (a port 0 in the config is resolved here). */
  readonly data: Address;
  readonly ops: Address;
  /** Resolves once the data listener answers from `revision` or a later one. */
  serving(revision: number): Promise<void>;
  /**
   * Resolves once the data listener answers from the first Snapshot and each zero-hop proxy's
   * first table was pushed and verified (at the latest at the first verification interval):
   * the end of the work a start does, whose garbage the collection after start is for.
   */
  readonly settled: Promise<void>;
  /** Resolves, with why, if the data listener's thread ends by itself: a bug, fatal. */
  readonly failed: Promise<string>;
  /** From now on /readyz answers 503; routing and /healthz answer until `close`. */
  beginShutdown(): void;
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
  /** The data thread's worker, spawned early by the CLI (`spawnDataWorker`); default: spawned here. */
  readonly dataWorker?: Worker;
}

const DRAIN_MS = 3_000;
/**
 * How long after the data listener answers from the first Snapshot the state file may first be
 * written: encoding it is 150 ms of the main thread's CPU at 100k Apps, in slices (ADR 78), which
 * would keep a cold start's `/readyz` waiting (ADR 73). As long as the main thread's collection
 * waits (MAIN_THREAD_DELAY_MS).
 */
const FIRST_WRITE_DELAY_MS = 250;

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
  if (config.allowLocalUpstreams)
    log.warn(
      "local upstreams are allowed: an App may route the proxy to loopback or link-local addresses, this pod's own ports among them",
    );
  if (config.serveCredentials && !isLoopbackHost(config.listen.host))
    log.warn(
      { listen: config.listen },
      "credentials are served on a data listener off loopback: anyone who reaches it reads every App's credential",
    );

  const holder = new SnapshotHolder();
  const metrics = createMetrics();
  // Started first: its thread boots on another core while the first lists are under way.
  const thread = startDataThread({
    listen: config.listen,
    limits: dataListenerLimits({
      host: config.listen.host,
      maxConnections: config.maxConnections,
      headersTimeoutSeconds: config.listenHeadersTimeoutSeconds,
      idleTimeoutSeconds: config.listenIdleTimeoutSeconds,
    }),
    retryAfter: DEFAULT_RETRY_AFTER,
    counts: metrics.routeCounts,
    logger: log,
    ...(options.dataWorker === undefined ? {} : { worker: options.dataWorker }),
  });
  metrics.dataThreadHeap(() => thread.heap());
  // `processMs`: since the process started (in tests, the test process).
  void thread.serving(1).then(() => {
    const fields = { revision: thread.servedRevision(), processMs: Math.round(performance.now()) };
    log.info(fields, "ready: the data listener answers from the first Snapshot");
  });
  const targets = config.push.map((p) => targetOf(p, config.serveCertificates));
  const pushers = startPushers(targets, {
    clock: options.clock ?? systemClock,
    metrics: createPushMetrics(metrics.registry),
    log,
  });
  const opened = await openLastGoodState(config, log, Date.now(), (o) => metrics.state.loaded(o));
  const shutdown = new AbortController();
  const clock = options.clock ?? systemClock;
  const keeper =
    opened === null || config.stateFile === undefined
      ? null
      : startStateKeeper({
          path: config.stateFile,
          opened,
          clock,
          wallClock: Date.now,
          notBefore: thread
            .serving(1)
            .then(() => sleep(clock, FIRST_WRITE_DELAY_MS, shutdown.signal)),
          reports: {
            written: (ms) => metrics.state.written(ms),
            failed: (message) => {
              metrics.state.failed();
              log.warn({ err: message }, "state file not written");
            },
          },
        });
  // Every consumer of a published Snapshot, in the order each is told (mirror/publication.ts).
  const sinks: SnapshotSink[] = [thread, ...pushers.sinks, ...(keeper === null ? [] : [keeper])];
  const observers: MirrorObserver[] = [
    metrics.observer,
    metrics.state.observer,
    metrics.certificates,
    logObserver(log),
    rolledBackObserver(opened, log, options.clock ?? systemClock),
  ];
  if (options.observer !== undefined) observers.push(options.observer);
  const checker = new RegistryThread({ log, after: thread.serving(1) });
  const mirror = new Mirror({
    registry: {
      listWatch: createListWatch(transport, {
        namespace: config.registryNamespace,
        fieldSelector: `metadata.name=${config.registryName}`,
      }),
      namespace: config.registryNamespace,
      name: config.registryName,
      key: config.registryKey,
      allowLocalUpstreams: config.allowLocalUpstreams,
      checker,
    },
    secrets: { scopes: secretScopes(transport, config) },
    holder,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    serveCredentials: config.serveCredentials,
    serveCertificates: config.serveCertificates,
    observer: observeAll(...observers),
    sinks,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.random === undefined ? {} : { random: options.random }),
    ...(options.reflector === undefined ? {} : { reflector: options.reflector }),
    ...(opened?.warm === undefined ? {} : { warm: opened.warm }),
  });
  mirror.start();

  let shuttingDown = false;
  const { server: ops, closeStatusApi } = createOpsServer({
    holder,
    metrics,
    retryAfter: DEFAULT_RETRY_AFTER,
    logger: log,
    ready: () => thread.servedRevision() > 0,
    answering: () => thread.answering(),
    stopping: () => shuttingDown,
    proxies: () => pushers.held(),
    allowRemoteStatusApi: config.allowRemoteStatusApi,
  });
  const drainMs = options.drainMs ?? DRAIN_MS;
  const listening = await thread.listening;
  let opsAddress: Address;
  try {
    if (!listening.ok) throw new Error(listening.error);
    opsAddress = await listen(ops, config.opsListen);
  } catch (e) {
    await Promise.allSettled([
      thread.close(0),
      closeServer(ops),
      keeper?.close(),
      pushers.close(),
      mirror.stop().then(() => checker.close()),
    ]);
    transport.close();
    return err(`cannot listen: ${(e as Error).message}`);
  }
  const dataAddress = { host: config.listen.host, port: listening.value };
  log.info({ listen: dataAddress, opsListen: opsAddress }, "listening");

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      shutdown.abort();
      const cut = setTimeout(() => ops.closeAllConnections(), drainMs);
      const opsClosed = closeServer(ops).then(closeStatusApi);
      // The state is written once more before the watches stop: it is as current as it gets.
      await keeper?.close();
      await pushers.close();
      await Promise.allSettled([
        thread.close(drainMs),
        opsClosed,
        mirror.stop().then(() => checker.close()),
      ]);
      clearTimeout(cut);
      transport.close();
      log.info("stopped");
    })();
    return closing;
  };
  return ok({
    config,
    holder,
    mirror,
    data: dataAddress,
    ops: opsAddress,
    serving: (revision) => thread.serving(revision),
    settled: Promise.all([thread.serving(1), pushers.firstVerified]).then(() => {}),
    failed: thread.ended,
    beginShutdown: () => {
      shuttingDown = true;
    },
    close,
  });
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

function listen(server: Server, address: Address): Promise<Address> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      const bound = server.address();
      resolve(
        typeof bound === "object" && bound !== null
          ? { host: address.host, port: bound.port }
          : address,
      );
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}
