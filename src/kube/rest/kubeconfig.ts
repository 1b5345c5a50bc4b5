// Finds and loads the kubeconfig as `--kubeconfig` promises (README, "Configuration"): an explicit
// path, else the in-cluster service account, else $KUBECONFIG, else ~/.kube/config.

import { existsSync, readFileSync } from "node:fs";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { err, ok, type Result } from "../../result.ts";

export type KubeConfigSource = "explicit" | "in-cluster" | "env" | "home";

export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  readonly source: KubeConfigSource;
  /** The files read, in order; empty in-cluster. */
  readonly paths: readonly string[];
  /** The current context's namespace (in-cluster: the pod's own namespace), if any. */
  readonly namespace?: string;
}

interface KubeConfigError {
  readonly kind: "kubeconfig";
  readonly message: string;
}

/** Where to look; defaults are the real process environment and filesystem. */
interface KubeConfigEnvironment {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly home?: string;
  /** Prepended to /var/run/secrets/kubernetes.io/serviceaccount (for tests). */
  readonly serviceAccountPrefix?: string;
}

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

const failure = (message: string): Result<never, KubeConfigError> =>
  err({ kind: "kubeconfig", message });

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Loads the kubeconfig the resolution order above selects; never throws. */
export function loadKubeConfig(
  explicitPath?: string,
  where: KubeConfigEnvironment = {},
): Result<LoadedKubeConfig, KubeConfigError> {
  const env = where.env ?? process.env;
  if (explicitPath !== undefined && explicitPath !== "") {
    return loadFiles("explicit", [explicitPath]);
  }
  const saDir = `${where.serviceAccountPrefix ?? ""}${SERVICE_ACCOUNT_DIR}`;
  if (env.KUBERNETES_SERVICE_HOST && existsSync(join(saDir, "token"))) {
    return loadInCluster(env, where.serviceAccountPrefix ?? "");
  }
  const fromEnv = (env.KUBECONFIG ?? "").split(delimiter).filter((p) => p !== "");
  if (fromEnv.length > 0) {
    // As kubectl: files of the list that do not exist are skipped, but one must exist.
    const present = fromEnv.filter((p) => existsSync(p));
    if (present.length === 0)
      return failure(`none of the files in $KUBECONFIG exist: ${fromEnv.join(delimiter)}`);
    return loadFiles("env", present);
  }
  const home = where.home ?? env.HOME ?? homedir();
  const homeConfig = join(home, ".kube", "config");
  if (!existsSync(homeConfig)) {
    return failure(
      `no kubeconfig found: not in a cluster (KUBERNETES_SERVICE_HOST unset or no service-account token), ` +
        `$KUBECONFIG unset, and ${homeConfig} does not exist; pass --kubeconfig`,
    );
  }
  return loadFiles("home", [homeConfig]);
}

function loadInCluster(
  env: Readonly<Record<string, string | undefined>>,
  prefix: string,
): Result<LoadedKubeConfig, KubeConfigError> {
  const host = env.KUBERNETES_SERVICE_HOST ?? "";
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!port) return failure("in-cluster config: KUBERNETES_SERVICE_PORT is not set");
  const dir = `${prefix}${SERVICE_ACCOUNT_DIR}`;
  const namespaceFile = join(dir, "namespace");
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, "utf8").trim() : "";
  // What client-go's rest.InClusterConfig builds. The tokenFile provider re-reads the token
  // every minute, so projected (rotating) service-account tokens keep working.
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: "in-cluster",
        server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
        caFile: join(dir, "ca.crt"),
        skipTLSVerify: false,
      },
    ],
    users: [
      {
        name: "in-cluster",
        authProvider: { name: "tokenFile", config: { tokenFile: join(dir, "token") } },
      },
    ],
    contexts: [{ name: "in-cluster", cluster: "in-cluster", user: "in-cluster", namespace }],
    currentContext: "in-cluster",
  });
  return checked(kc, "in-cluster", [], namespace);
}

function loadFiles(
  source: KubeConfigSource,
  paths: readonly string[],
): Result<LoadedKubeConfig, KubeConfigError> {
  const kc = new KubeConfig();
  for (const [i, path] of paths.entries()) {
    const next = new KubeConfig();
    try {
      next.loadFromFile(path);
    } catch (e) {
      return failure(`cannot load kubeconfig ${path}: ${describe(e)}`);
    }
    if (i === 0) kc.loadFromOptions(next);
    else mergeFirstWins(kc, next);
  }
  const namespace = contextNamespace(kc);
  return checked(kc, source, paths, namespace);
}

/** kubectl's merge: the first file to define a name wins, and the first current-context wins. */
function mergeFirstWins(into: KubeConfig, from: KubeConfig): void {
  const has = (list: readonly { name: string }[], name: string): boolean =>
    list.some((x) => x.name === name);
  into.loadFromOptions({
    clusters: [...into.clusters, ...from.clusters.filter((c) => !has(into.clusters, c.name))],
    users: [...into.users, ...from.users.filter((u) => !has(into.users, u.name))],
    contexts: [...into.contexts, ...from.contexts.filter((c) => !has(into.contexts, c.name))],
    currentContext: into.currentContext || from.currentContext,
  });
}

function contextNamespace(kc: KubeConfig): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? "";
}

function checked(
  kc: KubeConfig,
  source: KubeConfigSource,
  paths: readonly string[],
  namespace: string,
): Result<LoadedKubeConfig, KubeConfigError> {
  const where = paths.length > 0 ? paths.join(delimiter) : source;
  if (!kc.getCurrentContext()) return failure(`kubeconfig ${where}: no current-context`);
  const context = kc.getContextObject(kc.getCurrentContext());
  if (context === null)
    return failure(`kubeconfig ${where}: context "${kc.getCurrentContext()}" not found`);
  const cluster = kc.getCurrentCluster();
  if (cluster === null)
    return failure(`kubeconfig ${where}: cluster "${context.cluster}" not found`);
  if (!cluster.server)
    return failure(`kubeconfig ${where}: cluster "${cluster.name}" has no server`);
  return ok({ kubeConfig: kc, source, paths, ...(namespace === "" ? {} : { namespace }) });
}
