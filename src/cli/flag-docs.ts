// How `serve --help` and the README describe each flag (a test keeps the README's table in step).

import { DEFAULT_HAPROXY_CRT_LIST } from "../push/haproxy-certificates.ts";
import { DEFAULT_HAPROXY_CREDENTIALS_MAP } from "../push/haproxy-credentials.ts";
import { DEFAULT_HAPROXY_MAP } from "../push/haproxy-target.ts";
import { DATA_LISTENER_DEFAULTS } from "../route/listener-limits.ts";
import { envName, type FlagName } from "./config.ts";

/** How `--help` and the README describe each flag; a flag without an entry does not compile. */
export const FLAG_DOCS: Readonly<
  Record<FlagName, { value: string; help: string; shownDefault: string }>
> = {
  kubeconfig: {
    value: "PATH",
    help: "kubeconfig file",
    shownDefault: "in-cluster config in a pod, else $KUBECONFIG, else ~/.kube/config",
  },
  "registry-namespace": {
    value: "NS",
    help: "namespace of the Registry Secret",
    shownDefault:
      "the pod's own namespace ($POD_NAMESPACE, else the service account's), else default",
  },
  "registry-name": {
    value: "NAME",
    help: "name of the Registry Secret",
    shownDefault: "replica-registry",
  },
  "registry-key": {
    value: "KEY",
    help: "key of the Registry Secret holding the document",
    shownDefault: "registry.json",
  },
  "secret-namespaces": {
    value: "a,b",
    help: "watch App Secrets in these namespaces only, one watch each (Role-only RBAC)",
    shownDefault: "empty: one cluster-wide watch",
  },
  "secret-selector": { value: "SEL", help: "label selector for App Secrets", shownDefault: "none" },
  listen: {
    value: "HOST:PORT",
    help: "the data listener: /v1/route only (keep it on loopback)",
    shownDefault: "127.0.0.1:8080",
  },
  "ops-listen": {
    value: "HOST:PORT",
    help: "the ops listener: /healthz, /readyz, /metrics and the lookup and status API",
    shownDefault: "0.0.0.0:9090",
  },
  "allow-remote-status-api": {
    value: "BOOL",
    help: "let the status API (/v1/*) on --ops-listen answer peers off loopback: anyone who reaches the port reads App names, hostnames and upstreams",
    shownDefault: "false: loopback peers only (kubectl port-forward, kubectl exec), 403 to others",
  },
  "watch-timeout": {
    value: "SECONDS",
    help: "server-side timeout of each watch (randomised up to 2x); a watch silent for longer plus a grace is reopened",
    shownDefault: "300",
  },
  "log-level": {
    value: "LEVEL",
    help: "trace, debug, info, warn, error or fatal (debug and trace log every status API request)",
    shownDefault: "info",
  },
  "state-file": {
    value: "PATH",
    help: "where the last-good state is kept, encrypted, for a warm start (needs --state-key-file)",
    shownDefault: "none: every start lists",
  },
  "state-key-file": {
    value: "PATH",
    help: "the state file's AES-256 key: 32 bytes, or 64 hex characters, or base64 (a mounted Secret)",
    shownDefault: "none: the state file is off",
  },
  "state-max-age": {
    value: "SECONDS",
    help: "the oldest state file a start serves from",
    shownDefault: "86400 (a day)",
  },
  "allow-non-loopback-listen": {
    value: "BOOL",
    help: "let --listen take an address other than loopback (a warning is logged): anyone who reaches it reads App names and upstreams",
    shownDefault: "false",
  },
  "max-connections": {
    value: "N",
    help: "connections the data listener holds open at once; at the cap a new connection closes the longest-idle one",
    shownDefault: String(DATA_LISTENER_DEFAULTS.maxConnections),
  },
  "listen-headers-timeout": {
    value: "SECONDS",
    help: "a data-listener connection whose request headers are not complete this long after it began is closed with 408",
    shownDefault: String(DATA_LISTENER_DEFAULTS.headersTimeoutSeconds),
  },
  "listen-idle-timeout": {
    value: "SECONDS",
    help: "a kept-alive data-listener connection idle this long is closed; 0: never",
    shownDefault: `0 (never) on loopback, else ${DATA_LISTENER_DEFAULTS.idleTimeoutSeconds}`,
  },
  "shutdown-grace": {
    value: "SECONDS",
    help: "after SIGTERM, keep routing (/readyz answers 503) this long before closing the listeners",
    shownDefault: "5",
  },
  "allow-cluster-wide-secrets": {
    value: "BOOL",
    help: "let the sidecar watch App Secrets in every namespace with no --secret-selector",
    shownDefault: "false: without --secret-namespaces or --secret-selector, serve refuses to start",
  },
  "allow-local-upstreams": {
    value: "BOOL",
    help: "let an App's upstream be a loopback, unspecified or link-local address (127.0.0.0/8, localhost, 0.0.0.0, ::1, 169.254.0.0/16, fe80::/10); without it such an App is refused",
    shownDefault: "false",
  },
  "serve-credentials": {
    value: "BOOL",
    help: "let an App with a credential be served: /v1/route hands its Secret's value to the data plane, which sends it to the upstream as Authorization; without it such an App answers 503 credentials-off",
    shownDefault: "false",
  },
  "serve-certificates": {
    value: "BOOL",
    help: "zero-hop: hand each App's TLS certificate (its tls.secretRef Secret, checked) to the proxies to serve by SNI; without it no TLS Secret is read",
    shownDefault: "false",
  },
  "push-haproxy": {
    value: "unix:PATH",
    help: "zero-hop: keep the routing table in HAProxy's map through its runtime API, the stats socket at PATH (a bare PATH too)",
    shownDefault: "none",
  },
  "push-haproxy-map": {
    value: "PATH",
    help: "the map file as the zero-hop haproxy.cfg names it",
    shownDefault: DEFAULT_HAPROXY_MAP,
  },
  "push-haproxy-credentials-map": {
    value: "PATH",
    help: "the credentials map file as the zero-hop haproxy.cfg names it",
    shownDefault: DEFAULT_HAPROXY_CREDENTIALS_MAP,
  },
  "push-haproxy-crt-list": {
    value: "PATH",
    help: "with --serve-certificates: the crt-list file as the zero-hop haproxy.cfg binds it, the certificates added at run time named beside it; without, HAProxy's certificates are left alone",
    shownDefault: DEFAULT_HAPROXY_CRT_LIST,
  },
  "push-caddy": {
    value: "unix:PATH",
    help: "zero-hop: keep the routing table in Caddy through its admin API, listening on the Unix socket PATH",
    shownDefault: "none",
  },
  "push-nginx": {
    value: "unix:PATH",
    help: "zero-hop: keep the routing table in nginx's Lua dictionary through its push listener, the Unix socket PATH",
    shownDefault: "none",
  },
};

/** Every flag name, in `--help` order. */
export const FLAG_NAMES = Object.keys(FLAG_DOCS) as FlagName[];

/** The `--help` text of `serve`: every flag, its variable and its default. */
export function serveHelp(): string {
  const lines = [
    "Usage: replica-mirror serve [flags]",
    "",
    "Flags (each also settable as an environment variable):",
  ];
  for (const name of FLAG_NAMES) {
    const d = FLAG_DOCS[name];
    lines.push(
      `  --${name} ${d.value}`,
      `      ${d.help}`,
      `      env ${envName(name)}; default: ${d.shownDefault}`,
    );
  }
  return lines.join("\n");
}
