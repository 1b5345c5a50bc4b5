// The one table of `serve`'s flags: each flag's value type, its default written as the flag's own
// text, and its docs. The zod schema, `--help` and the variable names derive from it; a test
// keeps the README's table in step.

import * as z from "zod";
import { DEFAULT_HAPROXY_CRT_LIST } from "../push/haproxy-certificates.ts";
import { DEFAULT_HAPROXY_CREDENTIALS_MAP } from "../push/haproxy-credentials.ts";
import { DEFAULT_HAPROXY_MAP } from "../push/haproxy-target.ts";
import { dnsLabel, dnsSubdomain, named, secretKey } from "../registry/schema.ts";
import { DATA_LISTENER_DEFAULTS as LISTENER } from "../route/listener-limits.ts";
import { bool, count, hostPort, nonEmpty, seconds, unixSocket } from "./flag-types.ts";

/** How `--help` and the README describe a flag. */
interface FlagDocs {
  /** What the value looks like: `PATH`, `SECONDS`. */
  readonly value: string;
  readonly help: string;
}

/** One flag: how its value parses, and its docs, with `shownDefault` derived from the default. */
interface Flag<S extends z.ZodType> extends FlagDocs {
  readonly schema: S;
  readonly shownDefault: string;
}

/** A flag with a default: `default` is its text when unset, parsed as if given; `note` follows it. */
type Defaulted = FlagDocs & { readonly default: string; readonly note?: string };
/** A flag that may be unset; `unset` says what that means. */
type Optional = FlagDocs & { readonly unset: string };

function flag<T extends z.ZodType>(type: T, docs: Defaulted): Flag<z.ZodPrefault<T>>;
function flag<T extends z.ZodType>(type: T, docs: Optional): Flag<z.ZodOptional<T>>;
function flag<T extends z.ZodType>(
  type: T,
  docs: Defaulted | Optional,
): Flag<z.ZodPrefault<T> | z.ZodOptional<T>> {
  const { value, help } = docs;
  if ("unset" in docs) return { value, help, schema: type.optional(), shownDefault: docs.unset };
  const shownDefault = `${docs.default}${docs.note ?? ""}`;
  return { value, help, schema: type.prefault(docs.default as z.input<T>), shownDefault };
}

/** `unix:PATH`; HAProxy's also as a bare PATH. */
const socket = unixSocket(false);
const socketOrPath = unixSocket(true);

const namespaceList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n !== ""),
  )
  .pipe(z.array(named(dnsLabel)));

/** Every flag of `serve` (README, "Configuration"), in `--help` order. */
export const FLAGS = {
  kubeconfig: flag(nonEmpty, {
    value: "PATH",
    help: "kubeconfig file",
    unset: "in-cluster config in a pod, else $KUBECONFIG, else ~/.kube/config",
  }),
  "registry-namespace": flag(named(dnsLabel), {
    value: "NS",
    help: "namespace of the Registry Secret",
    unset: "the pod's own namespace ($POD_NAMESPACE, else the service account's), else default",
  }),
  "registry-name": flag(named(dnsSubdomain), {
    value: "NAME",
    help: "name of the Registry Secret",
    default: "replica-registry",
  }),
  "registry-key": flag(named(secretKey), {
    value: "KEY",
    help: "key of the Registry Secret holding the document",
    default: "registry.json",
  }),
  "secret-namespaces": flag(namespaceList, {
    value: "a,b",
    help: "watch App Secrets in these namespaces only, one watch each (Role-only RBAC)",
    default: "",
    note: "empty: one cluster-wide watch",
  }),
  "secret-selector": flag(nonEmpty, {
    value: "SEL",
    help: "label selector for App Secrets",
    unset: "none",
  }),
  listen: flag(hostPort, {
    value: "HOST:PORT",
    help: "the data listener: /v1/route only (keep it on loopback)",
    default: "127.0.0.1:8080",
  }),
  "ops-listen": flag(hostPort, {
    value: "HOST:PORT",
    help: "the ops listener: /healthz, /readyz, /metrics and the lookup and status API",
    default: "0.0.0.0:9090",
  }),
  "allow-remote-status-api": flag(bool, {
    value: "BOOL",
    help: "let the status API (/v1/*) on --ops-listen answer peers off loopback: anyone who reaches the port reads App names, hostnames and upstreams",
    default: "false",
    note: ": loopback peers only (kubectl port-forward, kubectl exec), 403 to others",
  }),
  "watch-timeout": flag(count(1, 3600), {
    value: "SECONDS",
    help: "server-side timeout of each watch (randomised up to 2x); a watch silent for longer plus a grace is reopened",
    default: "300",
  }),
  "log-level": flag(z.enum(["trace", "debug", "info", "warn", "error", "fatal"]), {
    value: "LEVEL",
    help: "trace, debug, info, warn, error or fatal (debug and trace log every status API request)",
    default: "info",
  }),
  "state-file": flag(nonEmpty, {
    value: "PATH",
    help: "where the last-good state is kept, encrypted, for a warm start (needs --state-key-file)",
    unset: "none: every start lists",
  }),
  "state-key-file": flag(nonEmpty, {
    value: "PATH",
    help: "the state file's AES-256 key: 32 bytes, or 64 hex characters, or base64 (a mounted Secret)",
    unset: "none: the state file is off",
  }),
  "state-max-age": flag(count(1), {
    value: "SECONDS",
    help: "the oldest state file a start serves from",
    default: "86400",
    note: " (a day)",
  }),
  "allow-non-loopback-listen": flag(bool, {
    value: "BOOL",
    help: "let --listen take an address other than loopback (a warning is logged): anyone who reaches it reads App names and upstreams",
    default: "false",
  }),
  "max-connections": flag(count(1, 1_000_000), {
    value: "N",
    help: "connections the data listener holds open at once; at the cap a new connection closes the longest-idle one",
    default: String(LISTENER.maxConnections),
  }),
  "listen-headers-timeout": flag(seconds(3600).min(1, "must be at least 1"), {
    value: "SECONDS",
    help: "a data-listener connection whose request headers are not complete this long after it began is closed with 408",
    default: String(LISTENER.headersTimeoutSeconds),
  }),
  "listen-idle-timeout": flag(seconds(3600), {
    value: "SECONDS",
    help: "a kept-alive data-listener connection idle this long is closed; 0: never",
    unset: `0 (never) on loopback, else ${LISTENER.idleTimeoutSeconds}`,
  }),
  "shutdown-grace": flag(seconds(3600), {
    value: "SECONDS",
    help: "after SIGTERM, keep routing (/readyz answers 503) this long before closing the listeners",
    default: "5",
  }),
  "allow-cluster-wide-secrets": flag(bool, {
    value: "BOOL",
    help: "let the sidecar watch App Secrets in every namespace with no --secret-selector",
    default: "false",
    note: ": without --secret-namespaces or --secret-selector, serve refuses to start",
  }),
  "allow-local-upstreams": flag(bool, {
    value: "BOOL",
    help: "let an App's upstream be a loopback, unspecified or link-local address (127.0.0.0/8, localhost, 0.0.0.0, ::1, 169.254.0.0/16, fe80::/10); without it such an App is refused",
    default: "false",
  }),
  "serve-credentials": flag(bool, {
    value: "BOOL",
    help: "let an App with a credential be served: /v1/route hands its Secret's value to the data plane, which sends it to the upstream as Authorization; without it such an App answers 503 credentials-off",
    default: "false",
  }),
  "serve-certificates": flag(bool, {
    value: "BOOL",
    help: "zero-hop: hand each App's TLS certificate (its tls.secretRef Secret, checked) to the proxies to serve by SNI; without it no TLS Secret is read",
    default: "false",
  }),
  "push-haproxy": flag(socketOrPath, {
    value: "unix:PATH",
    help: "zero-hop: keep the routing table in HAProxy's map through its runtime API, the stats socket at PATH (a bare PATH too)",
    unset: "none",
  }),
  "push-haproxy-map": flag(nonEmpty, {
    value: "PATH",
    help: "the map file as the zero-hop haproxy.cfg names it",
    default: DEFAULT_HAPROXY_MAP,
  }),
  "push-haproxy-credentials-map": flag(nonEmpty, {
    value: "PATH",
    help: "the credentials map file as the zero-hop haproxy.cfg names it",
    default: DEFAULT_HAPROXY_CREDENTIALS_MAP,
  }),
  "push-haproxy-crt-list": flag(nonEmpty, {
    value: "PATH",
    help: "with --serve-certificates: the crt-list file as the zero-hop haproxy.cfg binds it, the certificates added at run time named beside it; without, HAProxy's certificates are left alone",
    default: DEFAULT_HAPROXY_CRT_LIST,
  }),
  "push-caddy": flag(socket, {
    value: "unix:PATH",
    help: "zero-hop: keep the routing table in Caddy through its admin API, listening on the Unix socket PATH",
    unset: "none",
  }),
  "push-nginx": flag(socket, {
    value: "unix:PATH",
    help: "zero-hop: keep the routing table in nginx's Lua dictionary through its push listener, the Unix socket PATH",
    unset: "none",
  }),
};

/** A flag of `serve`, without its dashes. */
export type FlagName = keyof typeof FLAGS;

/** Every flag name, in `--help` order. */
export const FLAG_NAMES = Object.keys(FLAGS) as FlagName[];

/** The flags as zod parses them; keys are the flag names. */
export const serveFlags = z.object(
  Object.fromEntries(FLAG_NAMES.map((name) => [name, FLAGS[name].schema])) as {
    readonly [K in FlagName]: (typeof FLAGS)[K]["schema"];
  },
);

/** REPLICA_MIRROR_WATCH_TIMEOUT for watch-timeout. */
export const envName = (flag: string): string =>
  `REPLICA_MIRROR_${flag.toUpperCase().replaceAll("-", "_")}`;

/** The `--help` text of `serve`: every flag, its variable and its default. */
export function serveHelp(): string {
  const lines = [
    "Usage: replica-mirror serve [flags]",
    "",
    "Flags (each also settable as an environment variable):",
  ];
  for (const name of FLAG_NAMES) {
    const d = FLAGS[name];
    lines.push(
      `  --${name} ${d.value}`,
      `      ${d.help}`,
      `      env ${envName(name)}; default: ${d.shownDefault}`,
    );
  }
  return lines.join("\n");
}
