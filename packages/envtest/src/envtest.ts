/**
 * Starting the fake API server, and the programmatic handle tests and the CLI hold: URL,
 * kubeconfig, direct writes that notify watchers exactly as API writes do, faults, the request log,
 * and close.
 */
import { writeFile } from "node:fs/promises";
import { deleteSecret } from "./delete.ts";
import { createFaults, FaultSettings, type Faults } from "./faults.ts";
import { kubeconfigYaml } from "./kubeconfig.ts";
import { type RequestLog, RequestRecorder } from "./request-log.ts";
import { type SecretJSON, storeKey } from "./secret.ts";
import { listen } from "./server.ts";
import { EnvtestState } from "./store.ts";
import { selfSignedCertificate } from "./tls.ts";
import { WatchHub } from "./watch-hub.ts";
import { createSecret, updateSecret } from "./writes.ts";

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
   * A previous server's state, to simulate an API-server restart: objects, resourceVersion and
   * history carry over.
   */
  readonly state?: EnvtestState;
  /** Serve https with a self-signed certificate (falls back to http when openssl is missing). */
  readonly https?: boolean;
}

/** A Secret to write directly. `data` strings are UTF-8 text; Uint8Array values are raw bytes. */
export interface DirectSecret {
  readonly namespace: string;
  readonly name: string;
  readonly data?: Readonly<Record<string, string | Uint8Array>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly type?: string;
}

/**
 * A running fake API server. Contract: direct writes and API writes are indistinguishable to
 * watchers.
 */
export interface Envtest {
  readonly url: string;
  readonly port: number;
  /**
   * The store; pass it to a new startEnvtest on the same port to simulate an API-server restart.
   */
  readonly state: EnvtestState;
  /** Whether the server actually serves https. */
  readonly https: boolean;
  /** Kubeconfig YAML: cluster server=url, a token user, context and current-context `envtest`. */
  kubeconfig(): string;
  writeKubeconfig(path: string): Promise<void>;
  /**
   * Creates or replaces a Secret (given fields replace, absent ones are kept), bumping the
   * resourceVersion and notifying watchers as an API write does. Like an API write, identical
   * content is a no-op. Throws on invalid input.
   */
  apply(secret: DirectSecret): SecretJSON;
  /** Deletes a Secret; false when it did not exist. */
  delete(namespace: string, name: string): boolean;
  get(namespace: string, name: string): SecretJSON | undefined;
  readonly faults: Faults;
  readonly requests: RequestLog;
  /** How many watch connections are open. */
  readonly openWatches: number;
  /** Destroys every open socket; resolves when the port is free. Idempotent. */
  close(): Promise<void>;
}

const MANAGER = "envtest";

function toBase64(data: Readonly<Record<string, string | Uint8Array>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [
      k,
      (typeof v === "string" ? Buffer.from(v, "utf8") : Buffer.from(v)).toString("base64"),
    ]),
  );
}

/** Starts a fake API server for Secrets. */
export async function startEnvtest(opts: EnvtestOptions = {}): Promise<Envtest> {
  const host = opts.host ?? "127.0.0.1";
  const state = opts.state ?? new EnvtestState({ historySize: opts.historySize ?? 1000 });
  const settings = new FaultSettings();
  const hub = new WatchHub(state, settings, opts.bookmarkIntervalMs ?? 60_000);
  const faults = createFaults(settings, hub);
  const log = new RequestRecorder();
  const tls = opts.https ? await selfSignedCertificate() : undefined;
  const listening = await listen(
    { state, hub, settings, faults, log, tls },
    host,
    opts.port ?? 0,
  ).catch((e: unknown) => {
    hub.close();
    throw e;
  });
  const url = `${tls ? "https" : "http"}://${host}:${listening.port}`;
  let closing: Promise<void> | undefined;

  const kubeconfig = () => kubeconfigYaml(url);
  return {
    url,
    port: listening.port,
    state,
    https: tls !== undefined,
    kubeconfig,
    writeKubeconfig: (path) => writeFile(path, kubeconfig(), { mode: 0o600 }),
    apply: (s) => {
      const existing = state.get(storeKey(s.namespace, s.name))?.obj;
      const input = {
        metadata: {
          name: s.name,
          namespace: s.namespace,
          labels: s.labels ?? existing?.metadata.labels,
          annotations: s.annotations ?? existing?.metadata.annotations,
          finalizers: existing?.metadata.finalizers,
          ownerReferences: existing?.metadata.ownerReferences,
        },
        data: s.data === undefined ? existing?.data : toBase64(s.data),
        type: s.type ?? existing?.type,
        immutable: existing?.immutable,
      };
      const r = existing
        ? updateSecret(state, s.namespace, s.name, input, { manager: MANAGER })
        : createSecret(state, s.namespace, input, { manager: MANAGER });
      if (!r.ok) throw new Error(r.failure.status.message);
      return r.value.obj;
    },
    delete: (namespace, name) => deleteSecret(state, namespace, name, {}).ok,
    get: (namespace, name) => state.get(storeKey(namespace, name))?.obj,
    faults,
    requests: log,
    get openWatches() {
      return hub.size;
    },
    close: () => {
      closing ??= listening.close();
      return closing;
    },
  };
}
