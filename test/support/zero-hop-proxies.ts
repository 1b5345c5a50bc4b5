// Each proxy's shipped zero-hop configuration adapted to a scratch directory and free ports on
// 127.0.0.1, its runtime interface on a Unix socket in the directory's `push/` (the shipped
// volume's path, moved), with the PushTarget of that interface; the command that runs it, for the
// tests (startZeroHop) and for a measurement that spawns it itself; and what each proxy's own
// HTTP parser refuses before its configuration runs.

import { readFileSync } from "node:fs";
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { caddyCertificates } from "../../src/push/caddy-certificates.ts";
import { caddyTarget } from "../../src/push/caddy-target.ts";
import type { CertificateEntry } from "../../src/push/certificates.ts";
import { overlayOf } from "../../src/push/haproxy-overlay.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import type { PushTarget } from "../../src/push/target.ts";
import type { PushView } from "../../src/snapshot/types.ts";
import { writeDefaultCertificate } from "./certificates.ts";
import { type DataPlaneProcess, freePort, startDataPlane } from "./data-plane.ts";
import { crtListFiles } from "./haproxy-crt-list.ts";
import { nginxModule, SHIPPED_MODULE, withLuaRoutes } from "./nginx-module.ts";
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

export interface HaproxyLaunchOptions {
  /**
   * For a comparison with pushed certificates (the bench): HAProxy loads the certificates of
   * this view's Apps from files at start, the crt-list file listing each beside the default one
   * with the same names and SNI filters a push would give (haproxy-certificates.ts), and the
   * launch's target pushes no certificate (the maps only). Same configuration otherwise.
   */
  readonly certificatesFrom?: PushView;
}

/**
 * HAProxy with the shipped zero-hop haproxy.cfg: its socket, maps, crt-list and ports in `dir`,
 * and a default certificate made there as the shipped init step makes it.
 */
export async function haproxyLaunch(
  binary: string,
  dir: string,
  options: HaproxyLaunchOptions = {},
): Promise<ProxyLaunch> {
  const [port, tlsPort] = [await freePort(), await freePort()];
  const push = await pushDir(dir);
  const socket = join(push, "haproxy.sock");
  const map = join(dir, "replica-mirror.map");
  const credentialsMap = join(dir, "replica-mirror-credentials.map");
  const crtList = join(dir, "replica-mirror.crt-list");
  const listed = await crtListFiles(dir, crtList, options.certificatesFrom);
  const conf = (await readFile(join(HAPROXY_DIR, "haproxy.cfg"), "utf8"))
    .replace(SHIPPED_PUSH_DIR, `${push}/`)
    .replaceAll("/usr/local/etc/haproxy/replica-mirror.map", map)
    .replaceAll("/usr/local/etc/haproxy/replica-mirror-credentials.map", credentialsMap)
    .replaceAll("/usr/local/etc/haproxy/replica-mirror-overlay.map", overlayOf(map))
    .replaceAll(
      "/usr/local/etc/haproxy/replica-mirror-credentials-overlay.map",
      overlayOf(credentialsMap),
    )
    .replaceAll("/usr/local/etc/haproxy/replica-mirror.crt-list", crtList)
    .replace("bind :8000", `bind 127.0.0.1:${port}`)
    .replace("bind :8443", `bind 127.0.0.1:${tlsPort}`);
  await writeFile(join(dir, "haproxy.cfg"), conf);
  const pushed = options.certificatesFrom === undefined;
  return {
    command: binary,
    args: ["-db", "-f", join(dir, "haproxy.cfg")],
    env: {},
    port,
    tlsPort,
    socket,
    target: haproxyTarget({ socket, map, credentialsMap, ...(pushed ? { crtList } : {}) }),
    sidecarFlags: [
      "--push-haproxy",
      `unix:${socket}`,
      "--push-haproxy-map",
      map,
      "--push-haproxy-credentials-map",
      credentialsMap,
      "--push-haproxy-crt-list",
      crtList,
    ],
    // The shipped maps are empty and the crt-list names the default certificate alone: a
    // (re)started HAProxy holds no table and no App's certificate.
    prepare: async () => {
      await copyFile(join(HAPROXY_DIR, "replica-mirror.map"), map);
      await copyFile(join(HAPROXY_DIR, "replica-mirror-credentials.map"), credentialsMap);
      await copyFile(join(HAPROXY_DIR, "replica-mirror-overlay.map"), overlayOf(map));
      const credentialsOverlay = "replica-mirror-credentials-overlay.map";
      await copyFile(join(HAPROXY_DIR, credentialsOverlay), overlayOf(credentialsMap));
      await writeFile(crtList, listed);
    },
    log: () => "",
  };
}

/** HAProxy with the shipped zero-hop haproxy.cfg, started. */
export async function startZeroHopHaproxy(
  binary: string,
  dir: string,
  options: HaproxyLaunchOptions = {},
): Promise<ZeroHopProxy> {
  return startZeroHop(await haproxyLaunch(binary, dir, options));
}

const CADDY_CONFIG = "manifests/data-planes/caddy/zero-hop/caddy.json";
const CADDY_DEFAULT_TLS = "/var/run/replica-mirror/default-tls/";

export interface CaddyLaunchOptions {
  /**
   * For a measurement against pushed certificates: Caddy loads these certificates from files in
   * `dir` at its start (`load_files`, tagged as the pushed `load_pem` entries are) with the
   * connection policies a push of them would set, and nothing else changes. Its sidecar runs
   * without `--serve-certificates`, and so leaves them alone; so does the launch's `target`.
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
  await writeDefaultCertificate(join(defaultTls, "default.pem"));
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
    target: caddyTarget({ socket, certificates: options.certificatesFrom === undefined }),
    sidecarFlags: ["--push-caddy", `unix:${socket}`],
    prepare: async () => {},
    log: () => "",
  };
}

/** Caddy with the shipped zero-hop caddy.json, started. */
export async function startZeroHopCaddy(binary: string, dir: string): Promise<ZeroHopProxy> {
  return startZeroHop(await caddyLaunch(binary, dir));
}

const NGINX_DIR = "manifests/data-planes/nginx/zero-hop";

/** A certificate nginx loads from files, as `certificateEntries` lists one (names, chain, key). */
export interface FileCertificate {
  readonly names: readonly string[];
  readonly certificate: { readonly id: string; readonly chain: string; readonly key: string };
}

export interface NginxLaunchOptions {
  /**
   * For a comparison (the bench's handshakes per second): nginx loads these certificates from
   * files at its start instead of having them pushed. Each is written to `dir/certificates/` and
   * served by a copy of the shipped TLS server with `server_name` set to its names (nginx's own
   * SNI selection; its `*.suffix` also matches deeper names, the pushed one label only), without
   * `ssl_certificate_by_lua_block`; everything else, the default certificate and the pushed
   * routing table included, is as shipped. Omitted: the shipped configuration.
   */
  readonly certificatesFrom?: { readonly certificates: readonly FileCertificate[] };
  /**
   * The request path in replica-mirror.lua's route() and balance() instead of the C module, as
   * module/BUILDING.md says to run without it (ADR 86). Omitted: the shipped configuration.
   */
  readonly luaRoutes?: boolean;
}

/** nginx with the Lua module and the shipped zero-hop nginx.conf, its paths in `dir`. */
export async function nginxLaunch(
  binary: string,
  dir: string,
  options: NginxLaunchOptions = {},
): Promise<ProxyLaunch> {
  const [port, tlsPort] = [await freePort(), await freePort()];
  const push = await pushDir(dir);
  const socket = join(push, "nginx.sock");
  for (const lua of [
    "replica-mirror.lua",
    "replica-mirror-certificates.lua",
    "replica-mirror-digest.lua",
  ])
    await copyFile(join(NGINX_DIR, lua), join(dir, lua));
  // What the shipped pod's init container does: a default certificate made at the start.
  const defaults = join(dir, "default-certificate");
  await mkdir(defaults, { recursive: true });
  await writeDefaultCertificate(join(defaults, "default.pem"));
  // The shipped configuration with this test's ports and paths: no cluster DNS resolver here,
  // and the upstreams are IP addresses.
  let conf = (await readFile(join(NGINX_DIR, "nginx.conf"), "utf8"))
    .replaceAll("/tmp/", `${dir}/`)
    .replace("/etc/nginx/replica-mirror/", `${dir}/`)
    .replace(`load_module ${SHIPPED_MODULE};`, `load_module ${await nginxModule()};`)
    .replaceAll("/etc/nginx/default-certificate/", `${defaults}/`)
    .replace(/^\s*resolver .*$/m, "")
    // The test's stderr is a socket, which nginx cannot open as /dev/stderr.
    .replace("error_log /dev/stderr warn;", `error_log ${dir}/error.log warn;`)
    .replace(`listen unix:${SHIPPED_PUSH_DIR}nginx.sock;`, `listen unix:${socket};`)
    .replace("listen 8000;", `listen 127.0.0.1:${port};`)
    .replace("listen 8443 ssl;", `listen 127.0.0.1:${tlsPort} ssl;`);
  if (options.luaRoutes === true) conf = withLuaRoutes(conf);
  if (options.certificatesFrom !== undefined)
    conf = await withFileCertificates(conf, dir, options.certificatesFrom.certificates);
  await writeFile(join(dir, "nginx.conf"), conf);
  // Run as root (CI), nginx's workers are `nobody`: they must read the Lua file and the body
  // temp directory.
  await chmod(dir, 0o755);
  return {
    command: binary,
    args: ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"],
    env: {},
    port,
    tlsPort,
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

/**
 * `conf` serving `certificates` from files: the TLS server's block (the one that listens for
 * plain HTTP too) copied once per certificate, TLS only, with its names and files.
 */
async function withFileCertificates(
  conf: string,
  dir: string,
  certificates: readonly FileCertificate[],
): Promise<string> {
  const start = conf.indexOf("  server {\n    listen 127.0.0.1:");
  const end = conf.indexOf("\n  }\n", start) + "\n  }\n".length;
  const lua = /^\s*ssl_certificate_by_lua_block .*\n/m;
  const server = conf.slice(start, end).replace(lua, "");
  const files = join(dir, "certificates");
  await mkdir(files, { recursive: true });
  const copies: string[] = [];
  for (const { names, certificate } of certificates) {
    const [crt, key] = [join(files, `${certificate.id}.crt`), join(files, `${certificate.id}.key`)];
    await writeFile(crt, certificate.chain);
    await writeFile(key, certificate.key, { mode: 0o600 });
    copies.push(
      server
        .replace(/^\s*listen 127\.0\.0\.1:\d+;\n/m, "")
        .replace(
          /ssl_certificate \S+;/,
          `ssl_certificate ${crt};\n    server_name ${names.join(" ")};`,
        )
        .replace(/ssl_certificate_key \S+;/, `ssl_certificate_key ${key};`),
    );
  }
  return `${conf.slice(0, start)}${server}${copies.join("")}${conf.slice(end)}`;
}

/** nginx with the shipped zero-hop nginx.conf, started. */
export async function startZeroHopNginx(
  binary: string,
  dir: string,
  options: NginxLaunchOptions = {},
): Promise<ZeroHopProxy> {
  return startZeroHop(await nginxLaunch(binary, dir, options));
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
