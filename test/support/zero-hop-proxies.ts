// Each proxy's shipped zero-hop configuration adapted to a scratch directory and free ports on
// 127.0.0.1, its runtime interface on a Unix socket in the directory's `push/` (the shipped
// volume's path, moved), with the PushTarget of that interface; the command that runs it, for the
// tests (startZeroHop) and for a measurement that spawns it itself; and what each proxy's own
// HTTP parser refuses before its configuration runs.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { caddyCertificates } from "../../src/push/caddy-certificates.ts";
import { caddyTarget } from "../../src/push/caddy-target.ts";
import type { CertificateEntry } from "../../src/push/certificates.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import type { PushTarget } from "../../src/push/target.ts";
import { type DataPlaneProcess, freePort, startDataPlane } from "./data-plane.ts";
import { refused, type ZeroHopAnswer } from "./zero-hop.ts";

/** Where the shipped configurations put their runtime interface's socket (ADR 46). */
export const SHIPPED_PUSH_DIR = "/var/run/replica-mirror/push/";

/** The scratch directory's stand-in for the shipped push volume, created. */
async function pushDir(dir: string): Promise<string> {
  const push = join(dir, "push");
  await mkdir(push, { recursive: true });
  return push;
}

/** How to run one configured proxy. */
export interface ProxyLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Where clients connect. */
  readonly port: number;
  /** Where clients connect over TLS (ADR 56); null: the launch does not terminate TLS yet. */
  readonly tlsPort: number | null;
  /** The Unix socket of its runtime interface. */
  readonly socket: string;
  readonly target: PushTarget;
  /** The `serve` flags that point a sidecar at this proxy's runtime interface. */
  readonly sidecarFlags: readonly string[];
  /** Before every start: what a fresh proxy finds on disk (HAProxy's empty map). */
  prepare(): Promise<void>;
  /** Its error log, when it writes one to a file. */
  log(): string;
}

/** A proxy in zero-hop mode and the PushTarget of its runtime interface. */
export interface ZeroHopProxy {
  readonly port: number;
  /** Where clients connect over TLS; null: not terminated. */
  readonly tlsPort: number | null;
  /** The Unix socket of its runtime interface. */
  readonly socket: string;
  /** The running proxy's process id (HAProxy and Caddy: the proxy; nginx: its master). */
  pid(): number;
  readonly target: PushTarget;
  /** The `serve` flags that point a sidecar at this proxy's runtime interface. */
  readonly sidecarFlags: readonly string[];
  /** Stops the proxy and starts it again with its configuration: an empty table. */
  restart(): Promise<void>;
  log(): string;
  stop(): Promise<void>;
}

/** Starts a launch and waits until it answers HTTP. */
export async function startZeroHop(launch: ProxyLaunch): Promise<ZeroHopProxy> {
  const start = async () => {
    await launch.prepare();
    return startDataPlane(launch.command, launch.args, launch.port, { ...launch.env });
  };
  let plane: DataPlaneProcess = await start();
  return {
    port: launch.port,
    tlsPort: launch.tlsPort,
    socket: launch.socket,
    pid: () => plane.pid,
    target: launch.target,
    sidecarFlags: launch.sidecarFlags,
    async restart() {
      await plane.stop();
      plane = await start();
    },
    log: () => `${plane.log()}${launch.log()}`,
    stop: () => plane.stop(),
  };
}

const HAPROXY_DIR = "manifests/data-planes/haproxy/zero-hop";

/** HAProxy with the shipped zero-hop haproxy.cfg: its socket, map and port in `dir`. */
export async function haproxyLaunch(binary: string, dir: string): Promise<ProxyLaunch> {
  const port = await freePort();
  const push = await pushDir(dir);
  const socket = join(push, "haproxy.sock");
  const map = join(dir, "replica-mirror.map");
  const credentialsMap = join(dir, "replica-mirror-credentials.map");
  const conf = (await readFile(join(HAPROXY_DIR, "haproxy.cfg"), "utf8"))
    .replace(SHIPPED_PUSH_DIR, `${push}/`)
    .replaceAll("/usr/local/etc/haproxy/replica-mirror.map", map)
    .replaceAll("/usr/local/etc/haproxy/replica-mirror-credentials.map", credentialsMap)
    .replace("bind :8000", `bind 127.0.0.1:${port}`);
  await writeFile(join(dir, "haproxy.cfg"), conf);
  return {
    command: binary,
    args: ["-db", "-f", join(dir, "haproxy.cfg")],
    env: {},
    port,
    tlsPort: null,
    socket,
    target: haproxyTarget({ socket, map, credentialsMap }),
    sidecarFlags: [
      "--push-haproxy",
      `unix:${socket}`,
      "--push-haproxy-map",
      map,
      "--push-haproxy-credentials-map",
      credentialsMap,
    ],
    // The shipped maps are empty: a (re)started HAProxy holds no table.
    prepare: async () => {
      await copyFile(join(HAPROXY_DIR, "replica-mirror.map"), map);
      await copyFile(join(HAPROXY_DIR, "replica-mirror-credentials.map"), credentialsMap);
    },
    log: () => "",
  };
}

/** HAProxy with the shipped zero-hop haproxy.cfg, started. */
export async function startZeroHopHaproxy(binary: string, dir: string): Promise<ZeroHopProxy> {
  return startZeroHop(await haproxyLaunch(binary, dir));
}

const CADDY_CONFIG = "manifests/data-planes/caddy/zero-hop/caddy.json";
const CADDY_DEFAULT_TLS = "/var/run/replica-mirror/default-tls/";

export interface CaddyLaunchOptions {
  /**
   * For a measurement against pushed certificates: Caddy loads these certificates from files in
   * `dir` at its start (`load_files`, tagged as the pushed `load_pem` entries are) with the
   * connection policies a push of them would set, and nothing else changes. Route it by pushing
   * views without certificates (`serveCertificates` false) through `target.push` directly: a view
   * with certificates would load them again through the admin API, and a pusher's verification
   * would find policies it did not push and clear them.
   */
  readonly certificatesFrom?: {
    readonly dir: string;
    readonly entries: readonly CertificateEntry[];
  };
}

/**
 * Caddy with the shipped zero-hop caddy.json: its listeners (plain and TLS) on free ports, its
 * admin socket in `dir`, and the default certificate made in `dir` as the shipped init step does.
 */
export async function caddyLaunch(
  binary: string,
  dir: string,
  options: CaddyLaunchOptions = {},
): Promise<ProxyLaunch> {
  const port = await freePort();
  const tlsPort = await freePort();
  const push = await pushDir(dir);
  const socket = join(push, "caddy.sock");
  const defaultTls = join(dir, "default-tls");
  await mkdir(defaultTls, { recursive: true });
  makeDefaultCertificate(defaultTls);
  const conf = JSON.parse(
    (await readFile(CADDY_CONFIG, "utf8"))
      .replace('":8000"', `"127.0.0.1:${port}"`)
      .replace('":8443"', `"127.0.0.1:${tlsPort}"`)
      .replace('"http_port": 8000', `"http_port": ${port}`)
      .replaceAll(CADDY_DEFAULT_TLS, `${defaultTls}/`)
      .replace(`"unix/${SHIPPED_PUSH_DIR}caddy.sock"`, `"unix/${socket}"`),
  );
  if (options.certificatesFrom !== undefined) {
    const { dir: from, entries } = options.certificatesFrom;
    const certificates = caddyCertificates(entries);
    await mkdir(from, { recursive: true });
    const files = await Promise.all(
      certificates.sources.map(async ({ certificate }, i) => {
        const [crt, key] = [
          join(from, `${certificate.id}.crt`),
          join(from, `${certificate.id}.key`),
        ];
        await writeFile(crt, certificate.chain);
        await writeFile(key, certificate.key, { mode: 0o600 });
        return { certificate: crt, key, tags: certificates.loaded[i]!.tags };
      }),
    );
    conf.apps.tls.certificates.load_files.push(...files);
    conf.apps.http.servers.edge.tls_connection_policies = certificates.policies;
  }
  const path = join(dir, "caddy.json");
  await writeFile(path, JSON.stringify(conf));
  return {
    command: binary,
    args: ["run", "--config", path],
    // Caddy keeps state under $HOME and the XDG directories: the scratch directory, not root's.
    env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    port,
    tlsPort,
    socket,
    target: caddyTarget({ socket }),
    sidecarFlags: ["--push-caddy", `unix:${socket}`],
    prepare: async () => {},
    log: () => "",
  };
}

/** The shipped init step's default certificate: `tls.crt` and `tls.key` in `dir`. */
export function makeDefaultCertificate(dir: string): void {
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"],
      ...["-days", "365", "-subj", "/CN=replica-mirror-default"],
      ...["-keyout", join(dir, "tls.key"), "-out", join(dir, "tls.crt")],
    ],
    { stdio: "pipe" },
  );
}

/** Caddy with the shipped zero-hop caddy.json, started. */
export async function startZeroHopCaddy(binary: string, dir: string): Promise<ZeroHopProxy> {
  return startZeroHop(await caddyLaunch(binary, dir));
}

const NGINX_DIR = "manifests/data-planes/nginx/zero-hop";

/** nginx with the Lua module and the shipped zero-hop nginx.conf, its paths in `dir`. */
export async function nginxLaunch(binary: string, dir: string): Promise<ProxyLaunch> {
  const port = await freePort();
  const push = await pushDir(dir);
  const socket = join(push, "nginx.sock");
  await copyFile(join(NGINX_DIR, "replica-mirror.lua"), join(dir, "replica-mirror.lua"));
  // The shipped configuration with this test's ports and paths: no cluster DNS resolver here,
  // and the upstreams are IP addresses.
  const conf = (await readFile(join(NGINX_DIR, "nginx.conf"), "utf8"))
    .replaceAll("/tmp/", `${dir}/`)
    .replace("/etc/nginx/replica-mirror/", `${dir}/`)
    .replace(/^\s*resolver .*$/m, "")
    // The test's stderr is a socket, which nginx cannot open as /dev/stderr.
    .replace("error_log /dev/stderr warn;", `error_log ${dir}/error.log warn;`)
    .replace(`listen unix:${SHIPPED_PUSH_DIR}nginx.sock;`, `listen unix:${socket};`)
    .replace("listen 8000;", `listen 127.0.0.1:${port};`);
  await writeFile(join(dir, "nginx.conf"), conf);
  // Run as root (CI), nginx's workers are `nobody`: they must read the Lua file and the body
  // temp directory.
  await chmod(dir, 0o755);
  return {
    command: binary,
    args: ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"],
    env: {},
    port,
    tlsPort: null,
    socket,
    target: nginxTarget({ socket }),
    sidecarFlags: ["--push-nginx", `unix:${socket}`],
    // What the shipped container does before it starts nginx, which cannot bind over a socket a
    // killed nginx left behind.
    prepare: () => rm(socket, { force: true }),
    log: () => {
      try {
        return readFileSync(join(dir, "error.log"), "utf8");
      } catch {
        return "";
      }
    },
  };
}

/** nginx with the shipped zero-hop nginx.conf, started. */
export async function startZeroHopNginx(binary: string, dir: string): Promise<ZeroHopProxy> {
  return startZeroHop(await nginxLaunch(binary, dir));
}

// The bytes Go's HTTP server accepts in a Host (golang.org/x/net/http/httpguts ValidHostHeader).
const GO_HOST = /^[0-9A-Za-z!$%&'()*+,\-.:;=[\]_~]*$/;

/** Go's net/http answer to a Host with a byte it refuses, before Caddy's routes run. */
export function goRefusesHost(host: string): ZeroHopAnswer | null {
  return GO_HOST.test(host)
    ? null
    : refused(400, null, null, "400 Bad Request: malformed Host header");
}

const NGINX_400 =
  "<html>\r\n<head><title>400 Bad Request</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

/**
 * nginx's own answer to a Host it refuses while reading the request (ngx_http_validate_host):
 * an empty name, "..", a path separator, a control byte or a space.
 */
export function nginxRefusesHost(host: string): ZeroHopAnswer | null {
  const name = host.startsWith("[") ? host : host.replace(/:.*$/, "").replace(/\.$/, "");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: nginx refuses control bytes
  const refusedByte = /\.\.|[/\x00-\x20\x7f]/.test(host);
  return refusedByte || name === "" ? refused(400, null, null, NGINX_400) : null;
}
