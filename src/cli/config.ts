import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as z from "zod";
import { DEFAULT_HAPROXY_CRT_LIST } from "../push/haproxy-certificates.ts";
import { DEFAULT_HAPROXY_CREDENTIALS_MAP } from "../push/haproxy-credentials.ts";
import { DEFAULT_HAPROXY_MAP } from "../push/haproxy-target.ts";
import { dnsLabel, dnsSubdomain, named, secretKey } from "../registry/schema.ts";
import { err, ok, type Result } from "../result.ts";
import { DATA_LISTENER_DEFAULTS, isLoopbackHost } from "../route/listener-limits.ts";
import type { PushTargetConfig, SidecarConfig } from "../sidecar/config.ts";

// The host is required: an empty one (`:8080`) reads as "every interface" to some and as
// "localhost" to others, so it is refused rather than guessed.
const hostPort = z.string().transform((raw, ctx) => {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(raw);
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || port > 65535) {
    ctx.issues.push({
      code: "custom",
      message: `expected HOST:PORT (port 0-65535), got '${raw}'`,
      input: raw,
    });
    return z.NEVER;
  }
  if (m[2] === "") {
    ctx.issues.push({
      code: "custom",
      message: `expected HOST:PORT with a host (127.0.0.1 for loopback, 0.0.0.0 for every interface), got '${raw}'`,
      input: raw,
    });
    return z.NEVER;
  }
  return { host: m[1] ?? m[2]!, port };
});

// A proxy's runtime interface: a Unix socket in the volume only the sidecar and the proxy mount
// (ADR 46). A TCP address is refused: every process of the pod, and any App whose upstream
// reaches it through the proxy, could write the table there.
const unixSocket = (barePath: boolean) =>
  z.string().transform((raw, ctx) => {
    const path = raw.startsWith("unix:") ? raw.slice("unix:".length) : barePath ? raw : "";
    if (path.startsWith("/") && path.length > 1) return path;
    ctx.issues.push({
      code: "custom",
      message: `expected unix:/PATH, the proxy's Unix socket (a TCP address lets any process of the pod write the table), got '${raw}'`,
      input: raw,
    });
    return z.NEVER;
  });

const bool = z.enum(["true", "false"], "must be true or false").transform((v) => v === "true");
const seconds = (max: number) =>
  z.coerce
    .number()
    .int("must be a whole number")
    .min(0, "must be at least 0")
    .max(max, `must be at most ${max}`);

/** The flags of `serve` (README, "Configuration"), as zod parses them; keys are the flag names. */
const serveFlags = z.object({
  kubeconfig: z.string().min(1, "must not be empty").optional(),
  "registry-namespace": named(dnsLabel).optional(),
  "registry-name": named(dnsSubdomain).default("replica-registry"),
  "registry-key": named(secretKey).default("registry.json"),
  "secret-namespaces": z
    .string()
    .default("")
    .transform((s) =>
      s
        .split(",")
        .map((n) => n.trim())
        .filter((n) => n !== ""),
    )
    .pipe(z.array(named(dnsLabel))),
  "secret-selector": z.string().min(1, "must not be empty").optional(),
  listen: hostPort.default({ host: "127.0.0.1", port: 8080 }),
  "ops-listen": hostPort.default({ host: "0.0.0.0", port: 9090 }),
  "allow-remote-status-api": bool.default(false),
  "watch-timeout": z.coerce
    .number()
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(3600, "must be at most 3600")
    .default(300),
  "log-level": z.enum(["trace", "debug", "info", "warn", "error", "fatal"]).default("info"),
  "state-file": z.string().min(1, "must not be empty").optional(),
  "state-key-file": z.string().min(1, "must not be empty").optional(),
  "state-max-age": z.coerce
    .number()
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .default(86_400),
  "allow-non-loopback-listen": bool.default(false),
  "max-connections": z.coerce
    .number()
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(1_000_000, "must be at most 1000000")
    .default(DATA_LISTENER_DEFAULTS.maxConnections),
  "listen-headers-timeout": seconds(3600)
    .min(1, "must be at least 1")
    .default(DATA_LISTENER_DEFAULTS.headersTimeoutSeconds),
  "listen-idle-timeout": seconds(3600).optional(),
  "shutdown-grace": seconds(3600).default(5),
  "allow-cluster-wide-secrets": bool.default(false),
  "allow-local-upstreams": bool.default(false),
  "serve-credentials": bool.default(false),
  "serve-certificates": bool.default(false),
  "push-haproxy": unixSocket(true).optional(),
  "push-haproxy-map": z.string().min(1, "must not be empty").default(DEFAULT_HAPROXY_MAP),
  "push-haproxy-credentials-map": z
    .string()
    .min(1, "must not be empty")
    .default(DEFAULT_HAPROXY_CREDENTIALS_MAP),
  "push-haproxy-crt-list": z.string().min(1, "must not be empty").default(DEFAULT_HAPROXY_CRT_LIST),
  "push-caddy": unixSocket(false).optional(),
  "push-nginx": unixSocket(false).optional(),
});

/** A flag of `serve`, without its dashes. */
export type FlagName = keyof typeof serveFlags.shape;

/** Every flag takes a value; zod, not the argument parser, decides what the value may be. */
const FLAG_OPTIONS = Object.fromEntries(
  Object.keys(serveFlags.shape).map((name) => [name, { type: "string" } as const]),
);

/** REPLICA_MIRROR_WATCH_TIMEOUT for watch-timeout. */
export const envName = (flag: string): string =>
  `REPLICA_MIRROR_${flag.toUpperCase().replaceAll("-", "_")}`;

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
  for (const name of Object.keys(serveFlags.shape) as FlagName[]) {
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
