import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type * as z from "zod";
import { err, ok, type Result } from "../result.ts";
import { isLoopbackHost } from "../route/listener-limits.ts";
import type { PushTargetConfig, SidecarConfig } from "../sidecar/config.ts";
import { envName, FLAG_NAMES, type FlagName, serveFlags } from "./flags.ts";

/** Every flag takes a value; zod, not the argument parser, decides what the value may be. */
const FLAG_OPTIONS = Object.fromEntries(
  FLAG_NAMES.map((name) => [name, { type: "string" } as const]),
);

const SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/** The pod's own namespace: the downward API variable, else the service account's file. */
function podNamespace(env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Parses `serve` flags over environment variables (flags win). The error is one line naming the
 * flag and the problem, as the CLI prints it before exiting with status 2.
 */
export function parseServeConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Result<SidecarConfig, string> {
  const raw: Partial<Record<FlagName, string>> = {};
  const from: Partial<Record<FlagName, string>> = {};
  for (const name of FLAG_NAMES) {
    const value = env[envName(name)];
    if (value !== undefined) {
      raw[name] = value;
      from[name] = envName(name);
    }
  }
  const { tokens } = parseArgs({
    args: [...argv],
    options: FLAG_OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === "positional") return err(`unexpected argument '${token.value}'`);
    if (token.kind === "option-terminator") return err("unexpected argument '--'");
    if (!token.rawName.startsWith("--")) return err(`unexpected argument '${token.rawName}'`);
    const name = token.name;
    if (!isFlag(name)) return err(`--${name}: unknown flag (see --help)`);
    if (token.value === undefined) return err(`--${name}: needs a value`);
    raw[name] = token.value;
    from[name] = `--${name}`;
  }
  const parsed = serveFlags.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]) as FlagName;
    return err(`${from[name] ?? `--${name}`}: ${issue.message}`);
  }
  const f = parsed.data;
  if (!f["allow-non-loopback-listen"] && !isLoopbackHost(f.listen.host))
    return err(
      `${from.listen ?? "--listen"}: ${f.listen.host} is not a loopback address, and the data listener tells anyone who reaches it App names and upstreams; pass --allow-non-loopback-listen true to listen there anyway`,
    );
  if (
    f["secret-namespaces"].length === 0 &&
    f["secret-selector"] === undefined &&
    !f["allow-cluster-wide-secrets"]
  )
    return err(
      "--secret-namespaces: empty, and no --secret-selector: the sidecar would read every Secret in the cluster; name the App Secrets' namespaces, label them and pass --secret-selector, or pass --allow-cluster-wide-secrets true",
    );
  return ok({
    kubeconfig: f.kubeconfig,
    registryNamespace: f["registry-namespace"] ?? podNamespace(env) ?? "default",
    registryName: f["registry-name"],
    registryKey: f["registry-key"],
    secretNamespaces: f["secret-namespaces"],
    secretSelector: f["secret-selector"],
    listen: f.listen,
    opsListen: f["ops-listen"],
    allowRemoteStatusApi: f["allow-remote-status-api"],
    watchTimeoutSeconds: f["watch-timeout"],
    logLevel: f["log-level"],
    stateFile: f["state-file"],
    stateKeyFile: f["state-key-file"],
    stateMaxAgeSeconds: f["state-max-age"],
    allowNonLoopbackListen: f["allow-non-loopback-listen"],
    maxConnections: f["max-connections"],
    listenHeadersTimeoutSeconds: f["listen-headers-timeout"],
    listenIdleTimeoutSeconds: f["listen-idle-timeout"],
    shutdownGraceSeconds: f["shutdown-grace"],
    allowClusterWideSecrets: f["allow-cluster-wide-secrets"],
    allowLocalUpstreams: f["allow-local-upstreams"],
    serveCredentials: f["serve-credentials"],
    serveCertificates: f["serve-certificates"],
    push: pushTargets(f),
  });
}

const isFlag = (name: string): name is FlagName => Object.hasOwn(serveFlags.shape, name);

/** The proxies `--push-*` names, in a fixed order. */
function pushTargets(f: z.infer<typeof serveFlags>): SidecarConfig["push"] {
  const targets: PushTargetConfig[] = [];
  const haproxy = f["push-haproxy"];
  if (haproxy !== undefined) {
    targets.push({
      kind: "haproxy",
      socket: haproxy,
      map: f["push-haproxy-map"],
      credentialsMap: f["push-haproxy-credentials-map"],
      crtList: f["push-haproxy-crt-list"],
    });
  }
  if (f["push-caddy"] !== undefined) targets.push({ kind: "caddy", socket: f["push-caddy"] });
  if (f["push-nginx"] !== undefined) targets.push({ kind: "nginx", socket: f["push-nginx"] });
  return targets;
}
