/**
 * Starting the fake API server, and the programmatic handle tests, benchmarks and the CLI hold:
 * URL, kubeconfigs, direct writes that notify watchers exactly as API writes do, faults, restarts,
 * the request log, and close.
 */
import { writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { deleteSecret } from "./delete.ts";
import { applyDirect, type DirectSecret } from "./direct-writes.ts";
import { createFaults, FaultSettings, type Faults } from "./faults.ts";
import { FeatureGateSettings, type FeatureGates } from "./feature-gates.ts";
import { sendError } from "./http-io.ts";
import { type KubeconfigOptions, kubeconfigYaml } from "./kubeconfig.ts";
import { listen } from "./listener.ts";
import { type RequestLog, type RequestLogOptions, RequestRecorder } from "./request-log.ts";
import { type DownMode, type RestartOptions, restartInPlace } from "./restart.ts";
import { type SecretJSON, storeKey } from "./secret.ts";
import { createHandler } from "./server.ts";
import { injected } from "./status.ts";
import { EnvtestState } from "./store.ts";
import { selfSignedCertificate } from "./tls.ts";
import { WatchHub } from "./watch-hub.ts";

/** How to start the server; every field is optional. */
export interface EnvtestOptions {
  /** 0 (default) picks an ephemeral port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** How often watches with allowWatchBookmarks get a BOOKMARK (default 60 000 ms). */
  readonly bookmarkIntervalMs?: number;
  /** Events retained for resumes and paged lists (default 1000); ignored when `state` is given. */
  readonly historySize?: number;
  /**
   * A previous server's state, to simulate an API-server restart by a new process: objects,
   * resourceVersion and history carry over (see `Envtest.restart` for one that loses history).
   */
  readonly state?: EnvtestState;
  /** Serve https with a self-signed certificate (falls back to http when openssl is missing). */
  readonly https?: boolean;
  /** How many request entries to keep, and the window of requests per second. */
  readonly requestLog?: RequestLogOptions;
  /** `--feature-gates`: the ones not named keep their defaults (WatchList on). */
  readonly featureGates?: Partial<FeatureGates>;
}

/**
 * A running fake API server. Contract: direct writes and API writes are indistinguishable to
 * watchers.
 */
export interface Envtest {
  readonly url: string;
  readonly port: number;
  /** The store; pass it to a new startEnvtest on the same port to restart with history intact. */
  readonly state: EnvtestState;
  /** Whether the server actually serves https. */
  readonly https: boolean;
  /**
   * Kubeconfig YAML: cluster server=url, a token user, context and current-context `envtest`.
   * With `client`, its token names that client in the request log.
   */
  kubeconfig(options?: KubeconfigOptions): string;
  /** Writes `kubeconfig(options)` to `path`, readable by its owner only. */
  writeKubeconfig(path: string, options?: KubeconfigOptions): Promise<void>;
  /**
   * Creates or replaces a Secret (given fields replace, absent ones are kept), bumping the
   * resourceVersion and notifying watchers as an API write does. Like an API write, identical
   * content is a no-op. Throws on invalid input.
   */
  apply(secret: DirectSecret): SecretJSON;
  /** Deletes a Secret; false when it did not exist. */
  delete(namespace: string, name: string): boolean;
  /** The stored Secret, or undefined. */
  get(namespace: string, name: string): SecretJSON | undefined;
  readonly faults: Faults;
  readonly requests: RequestLog;
  /** The feature gates requests are served with now. */
  readonly featureGates: FeatureGates;
  /**
   * Switches feature gates for requests from now on, as a restart with other `--feature-gates`
   * would, but without one: watches already open go on.
   */
  setFeatureGates(gates: Partial<FeatureGates>): FeatureGates;
  /** How many watch connections are open. */
  readonly openWatches: number;
  /**
   * Restarts the API server in place (same port, same objects) losing its watch history: open
   * watches end, and resuming from an older resourceVersion gets 410. Resolves once it serves again.
   */
  restart(options?: RestartOptions): Promise<void>;
  /** Destroys every open socket; resolves when the port is free. Idempotent. */
  close(): Promise<void>;
}

/** Starts a fake API server for Secrets. */
export async function startEnvtest(opts: EnvtestOptions = {}): Promise<Envtest> {
  const host = opts.host ?? "127.0.0.1";
  const state = opts.state ?? new EnvtestState({ historySize: opts.historySize ?? 1000 });
  const settings = new FaultSettings();
  const hub = new WatchHub(state, settings, opts.bookmarkIntervalMs ?? 60_000);
  const faults = createFaults(settings, hub);
  const log = new RequestRecorder(opts.requestLog);
  const featureGates = new FeatureGateSettings(opts.featureGates);
  const tls = opts.https ? await selfSignedCertificate() : undefined;
  let down: DownMode | undefined;
  let restarting: Promise<void> = Promise.resolve();
  let port = opts.port ?? 0;
  const restart = (options: RestartOptions = {}): Promise<void> => {
    restarting = restarting
      .catch(() => undefined)
      .then(() =>
        restartInPlace(
          {
            pause: () => listening.pause(),
            resume: () => listening.resume(),
            endWatches: () => hub.endAll(),
            setDown: (mode) => {
              down = mode;
            },
            forgetHistory: () => {
              state.advance();
              state.compact();
            },
            sleep: (ms) => sleep(ms),
          },
          options,
        ),
      );
    return restarting;
  };
  const handle = createHandler(
    {
      state,
      hub,
      settings,
      log,
      control: { faults, log, state, hub, restart, featureGates },
      featureGates,
      unavailable: () => down === "unavailable",
    },
    () => `${host}:${port}`,
  );
  const listening = await listen(
    (req, res) => {
      handle(req, res).catch((e: unknown) => {
        const message = e instanceof Error ? (e.stack ?? e.message) : String(e);
        process.emitWarning(`envtest handler failed: ${message}`);
        if (!res.headersSent) sendError(res, injected(500));
        else res.destroy();
      });
    },
    host,
    port,
    tls,
  ).catch((e: unknown) => {
    hub.close();
    throw e;
  });
  port = listening.port;
  const url = `${tls ? "https" : "http"}://${host}:${port}`;
  let closing: Promise<void> | undefined;
  const kubeconfig = (o?: KubeconfigOptions) => kubeconfigYaml(url, o);
  return {
    url,
    port,
    state,
    https: tls !== undefined,
    kubeconfig,
    writeKubeconfig: (path, o) => writeFile(path, kubeconfig(o), { mode: 0o600 }),
    apply: (s) => applyDirect(state, s),
    delete: (namespace, name) => deleteSecret(state, namespace, name, {}).ok,
    get: (namespace, name) => state.get(storeKey(namespace, name))?.obj,
    faults,
    requests: log,
    get featureGates() {
      return featureGates.current;
    },
    setFeatureGates: (gates) => featureGates.set(gates),
    get openWatches() {
      return hub.size;
    },
    restart,
    close: () => {
      if (closing === undefined) {
        hub.close();
        closing = listening.close();
      }
      return closing;
    },
  };
}
