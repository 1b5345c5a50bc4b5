// Real proxies in zero-hop mode, as the tests start them: echo upstreams that report what reached
// them, a raw client that sends any Host byte for byte, and each proxy's shipped zero-hop
// configuration adapted to a scratch directory and free ports, with the PushTarget that drives
// it. Everything listens on 127.0.0.1.

import { readFileSync } from "node:fs";
import { chmod, copyFile, readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import type { RouteAnswer } from "../../src/http/route-answer.ts";
import { caddyTarget } from "../../src/push/caddy-target.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import type { PushTarget } from "../../src/push/target.ts";
import { type DataPlaneProcess, freePort, sha256, startDataPlane } from "./data-plane.ts";
import { header, RawConnection } from "./raw-http.ts";

/** What reached an echo upstream. */
export interface ZeroHopEchoed {
  /** Which upstream answered: its index in `EchoUpstreams.urls`. */
  readonly upstream: number;
  readonly method: string;
  readonly path: string;
  readonly host: string | null;
  /** Every `x-mirror-*` header that arrived, by lower-case name. */
  readonly mirror: Readonly<Record<string, string>>;
  readonly bodyBytes: number;
  readonly bodySha256: string;
}

export interface EchoUpstreams {
  /** `http://127.0.0.1:<port>` of each upstream. */
  readonly urls: readonly string[];
  close(): Promise<void>;
}

/** `count` upstreams, each answering every request with its `ZeroHopEchoed` JSON. */
export async function startEchoUpstreams(count: number): Promise<EchoUpstreams> {
  const servers = await Promise.all(
    Array.from({ length: count }, async (_, upstream) => {
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const body = Buffer.concat(chunks);
          const mirror: Record<string, string> = {};
          for (const [name, value] of Object.entries(req.headers)) {
            if (name.startsWith("x-mirror-")) mirror[name] = String(value);
          }
          const echoed: ZeroHopEchoed = {
            upstream,
            method: req.method ?? "",
            path: req.url ?? "",
            host: req.headers.host ?? null,
            mirror,
            bodyBytes: body.length,
            bodySha256: sha256(body),
          };
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(echoed));
        });
      });
      server.keepAliveTimeout = 60_000;
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      return server;
    }),
  );
  return {
    urls: servers.map((s) => `http://127.0.0.1:${(s.address() as { port: number }).port}`),
    close: () =>
      Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))).then(() => {}),
  };
}

/** A client request, sent byte for byte: `host` null sends no Host line. */
export interface ZeroHopRequest {
  readonly host: string | null;
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
}

/** What the client sees: the answer's status, reason, retry-after, and the upstream's report or the body. */
export interface ZeroHopAnswer {
  readonly status: number;
  readonly reason: string | null;
  readonly retryAfter: string | null;
  readonly echoed: ZeroHopEchoed | null;
  readonly body: string;
}

/** One request on its own connection (the Host as UTF-8 bytes). */
export async function ask(port: number, request: ZeroHopRequest): Promise<ZeroHopAnswer> {
  const body = Buffer.from(request.body ?? new Uint8Array());
  const lines = [`${request.method ?? "GET"} ${request.path ?? "/orders/42"} HTTP/1.1`];
  if (request.host !== null) lines.push(`Host: ${request.host}`);
  for (const [name, value] of Object.entries(request.headers ?? {}))
    lines.push(`${name}: ${value}`);
  if (body.length > 0) lines.push(`Content-Length: ${body.length}`);
  lines.push("Connection: close", "", "");
  const connection = new RawConnection(port);
  try {
    const exchange = await connection.exchange(
      Buffer.concat([Buffer.from(lines.join("\r\n"), "utf8"), body]),
      request.method === "HEAD",
      10_000,
    );
    if (exchange.kind !== "answer")
      throw new Error(`no answer for ${request.host}: ${exchange.kind}`);
    const { response } = exchange;
    const text = response.body.toString("utf8");
    const json = header(response, "content-type") === "application/json";
    return {
      status: response.status,
      reason: header(response, "x-mirror-reason") ?? null,
      retryAfter: header(response, "retry-after") ?? null,
      echoed: json ? (JSON.parse(text) as ZeroHopEchoed) : null,
      body: json ? "" : text,
    };
  } finally {
    connection.destroy();
  }
}

/** What a zero-hop proxy shows the client for each answer that is not routed. */
export interface RefusedAnswers {
  readonly secretUnavailable: ZeroHopAnswer;
  readonly notSynced: ZeroHopAnswer;
  readonly unknownHost: ZeroHopAnswer;
  readonly badHost: ZeroHopAnswer;
  /** A routed App whose upstream is not http://host[:port]. */
  readonly noHttpUpstream: ZeroHopAnswer;
}

const refused = (status: number, reason: string | null, retryAfter: string | null, body: string) =>
  ({ status, reason, retryAfter, echoed: null, body }) satisfies ZeroHopAnswer;

/** The answers of the hop configurations that map each reason to a text (nginx, HAProxy). */
export const TEXT_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", "credentials not available yet"),
  notSynced: refused(503, "not-synced", "1", "routing table not synced yet"),
  unknownHost: refused(404, "unknown-host", null, "unknown host"),
  badHost: refused(400, "bad-host", null, "bad host"),
  noHttpUpstream: refused(502, null, null, "app has no http upstream"),
};

/**
 * What the client should see through a zero-hop proxy, given the answer `/v1/route` gives for
 * the request's Host: a routed request reaches the upstream whose URL begins the App's upstream
 * (`urls`), with the App's headers; anything else is the proxy's refusal for that reason.
 */
export function expectedAnswer(
  answer: RouteAnswer,
  request: { readonly host: string; readonly path: string },
  urls: readonly string[],
  answers: RefusedAnswers,
): ZeroHopAnswer {
  switch (answer.outcome) {
    case "secret-unavailable":
      return answers.secretUnavailable;
    case "not-synced":
      return answers.notSynced;
    case "unknown-host":
      return answers.unknownHost;
    case "bad-host":
      return answers.badHost;
    case "routed":
      break;
  }
  const headers = answer.headers as Record<string, string>;
  const upstream = headers["x-mirror-upstream"];
  const index = urls.findIndex((u) => upstream === u || upstream === `${u}/`);
  if (upstream === undefined || index === -1) return answers.noHttpUpstream;
  return {
    status: 200,
    reason: null,
    retryAfter: null,
    body: "",
    echoed: {
      upstream: index,
      method: "GET",
      path: request.path,
      host: request.host,
      mirror: {
        "x-mirror-app": headers["x-mirror-app"]!,
        "x-mirror-revision": headers["x-mirror-revision"]!,
        "x-mirror-upstream": upstream,
      },
      bodyBytes: 0,
      bodySha256: sha256(new Uint8Array()),
    },
  };
}

/** A proxy in zero-hop mode and the PushTarget of its runtime interface. */
export interface ZeroHopProxy {
  readonly port: number;
  readonly target: PushTarget;
  /** Stops the proxy and starts it again with its configuration: an empty table. */
  restart(): Promise<void>;
  log(): string;
  stop(): Promise<void>;
}

const HAPROXY_DIR = "manifests/data-planes/haproxy/zero-hop";

/** HAProxy with the shipped zero-hop haproxy.cfg: its socket, map and port in `dir`. */
export async function startZeroHopHaproxy(binary: string, dir: string): Promise<ZeroHopProxy> {
  const port = await freePort();
  const socket = join(dir, "admin.sock");
  const map = join(dir, "replica-mirror.map");
  const conf = (await readFile(join(HAPROXY_DIR, "haproxy.cfg"), "utf8"))
    .replace("/var/run/haproxy/admin.sock", socket)
    .replaceAll("/usr/local/etc/haproxy/replica-mirror.map", map)
    .replace("bind :8000", `bind 127.0.0.1:${port}`);
  await writeFile(join(dir, "haproxy.cfg"), conf);
  const start = async () => {
    // The shipped map is empty: a (re)started HAProxy holds no table.
    await copyFile(join(HAPROXY_DIR, "replica-mirror.map"), map);
    return startDataPlane(binary, ["-db", "-f", join(dir, "haproxy.cfg")], port);
  };
  let plane: DataPlaneProcess = await start();
  return {
    port,
    target: haproxyTarget({ socket: { path: socket }, map }),
    async restart() {
      await plane.stop();
      plane = await start();
    },
    log: () => plane.log(),
    stop: () => plane.stop(),
  };
}

const CADDY_CONFIG = "manifests/data-planes/caddy/zero-hop/caddy.json";

/** Caddy with the shipped zero-hop caddy.json: its listener and admin API on free ports. */
export async function startZeroHopCaddy(binary: string, dir: string): Promise<ZeroHopProxy> {
  const port = await freePort();
  const admin = await freePort();
  const conf = (await readFile(CADDY_CONFIG, "utf8"))
    .replace('":8000"', `"127.0.0.1:${port}"`)
    .replace('"127.0.0.1:2019"', `"127.0.0.1:${admin}"`);
  const path = join(dir, "caddy.json");
  await writeFile(path, conf);
  // Caddy keeps state under $HOME and the XDG directories: the scratch directory, not root's.
  const env = { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
  const start = () => startDataPlane(binary, ["run", "--config", path], port, env);
  let plane: DataPlaneProcess = await start();
  return {
    port,
    target: caddyTarget({ admin: `http://127.0.0.1:${admin}` }),
    async restart() {
      await plane.stop();
      plane = await start();
    },
    log: () => plane.log(),
    stop: () => plane.stop(),
  };
}

/** Caddy's answers, as its hop configuration passes the sidecar's on: no body. */
export const CADDY_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", ""),
  notSynced: refused(503, "not-synced", "1", ""),
  unknownHost: refused(404, "unknown-host", null, ""),
  badHost: refused(400, "bad-host", null, ""),
  noHttpUpstream: refused(502, null, null, "app has no http upstream"),
};

// The bytes Go's HTTP server accepts in a Host (golang.org/x/net/http/httpguts ValidHostHeader).
const GO_HOST = /^[0-9A-Za-z!$%&'()*+,\-.:;=[\]_~]*$/;

/** Go's net/http answer to a Host with a byte it refuses, before Caddy's routes run. */
export function goRefusesHost(host: string): ZeroHopAnswer | null {
  return GO_HOST.test(host)
    ? null
    : refused(400, null, null, "400 Bad Request: malformed Host header");
}

const NGINX_DIR = "manifests/data-planes/nginx/zero-hop";

/** nginx with the Lua module and the shipped zero-hop nginx.conf, its paths in `dir`. */
export async function startZeroHopNginx(binary: string, dir: string): Promise<ZeroHopProxy> {
  const port = await freePort();
  const push = await freePort();
  await copyFile(join(NGINX_DIR, "replica-mirror.lua"), join(dir, "replica-mirror.lua"));
  // The shipped configuration with this test's ports and paths: no cluster DNS resolver here,
  // and the upstreams are IP addresses.
  const conf = (await readFile(join(NGINX_DIR, "nginx.conf"), "utf8"))
    .replaceAll("/tmp/", `${dir}/`)
    .replace("/etc/nginx/replica-mirror/", `${dir}/`)
    .replace(/^\s*resolver .*$/m, "")
    // The test's stderr is a socket, which nginx cannot open as /dev/stderr.
    .replace("error_log /dev/stderr warn;", `error_log ${dir}/error.log warn;`)
    .replace("listen 127.0.0.1:8001;", `listen 127.0.0.1:${push};`)
    .replace("listen 8000;", `listen 127.0.0.1:${port};`);
  await writeFile(join(dir, "nginx.conf"), conf);
  // Run as root (CI), nginx's workers are `nobody`: they must read the Lua file and the body
  // temp directory.
  await chmod(dir, 0o755);
  const start = () =>
    startDataPlane(binary, ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], port);
  let plane: DataPlaneProcess = await start();
  return {
    port,
    target: nginxTarget({ endpoint: `http://127.0.0.1:${push}` }),
    async restart() {
      await plane.stop();
      plane = await start();
    },
    log: () => `${plane.log()}${readFileSync(join(dir, "error.log"), "utf8")}`,
    stop: () => plane.stop(),
  };
}

/** The nginx configurations' answers: each reason its status and a text line. */
export const NGINX_ANSWERS: RefusedAnswers = {
  secretUnavailable: refused(503, "secret-unavailable", "5", "credentials not available yet\n"),
  notSynced: refused(503, "not-synced", "1", "routing table not synced yet\n"),
  unknownHost: refused(404, "unknown-host", null, "unknown host\n"),
  badHost: refused(400, "bad-host", null, "bad host\n"),
  noHttpUpstream: refused(502, null, null, "app has no http upstream\n"),
};

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
