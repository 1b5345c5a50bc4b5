// Real data planes (nginx, Caddy, HAProxy) in front of an in-process sidecar: what every
// end-to-end test shares. An App's upstream that echoes what reached it, free ports, the routing
// world in envtest (a ready App, an App whose Secret is missing, one whose Secret comes later),
// the sidecar on a fixed port so that it can be replaced or stopped under the data plane, client
// requests with a raw Host header, and the data-plane process. Everything listens on 127.0.0.1.

import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, copyFile, readFile, symlink, writeFile } from "node:fs/promises";
import http from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Envtest } from "@replica-mirror/envtest";
import { startTestSidecar, type TestSidecar } from "./sidecar.ts";
import { findTool, type Tool } from "./tools.ts";
import { waitUntil } from "./wait.ts";
import { APP_NS, envtestFor, writeRegistry, writeRegistryValue, writeSecret } from "./world.ts";

/** A port nothing listens on at this moment, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise((r) => server.close(r));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** What reached the upstream: the request line, its Host, the App header, the body's digest. */
export interface Echoed {
  readonly method: string;
  readonly host: string | null;
  readonly app: string | null;
  /** Every `x-mirror-*` header line that arrived, by lower-case name, each value in order. */
  readonly mirror: Readonly<Record<string, readonly string[]>>;
  readonly path: string;
  readonly bodyBytes: number;
  readonly bodySha256: string;
}

/** The sha256 of `bytes` in hex, as the upstream reports a body. */
export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** An App's upstream on 127.0.0.1 that answers every request with its `Echoed` JSON. */
async function startEchoUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const mirror: Record<string, string[]> = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!.toLowerCase();
        if (name.startsWith("x-mirror-"))
          mirror[name] = [...(mirror[name] ?? []), req.rawHeaders[i + 1]!];
      }
      const echoed: Echoed = {
        method: req.method ?? "",
        host: req.headers.host ?? null,
        app: (req.headers["x-mirror-app"] as string | undefined) ?? null,
        mirror,
        path: req.url ?? "",
        bodyBytes: body.length,
        bodySha256: sha256(body),
      };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(echoed));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The hosts of the routing world, by what the sidecar answers for them. */
export const HOSTS = {
  /** `shop`: its Secret exists. */
  ready: "shop.example.com",
  /** `blog`: its Secret never exists. */
  secretMissing: "blog.example.com",
  /** `news`: its Secret appears when a test calls `createLaterSecret`. */
  later: "news.example.com",
  unknown: "nope.example.com",
  /** An IPv6 literal: a host every data plane forwards and the sidecar refuses. */
  bad: "[::1]",
  /** Under `*.edge.example.com`, two labels deep: App `edge`. */
  wildcard: "a.b.edge.example.com",
} as const;

/** The envtest world, its sidecar on a fixed port, and the Apps' upstream. */
export interface RoutingWorld {
  readonly envtest: Envtest;
  /** The Apps' upstream, as the Registry names it: `http://127.0.0.1:<port>`. */
  readonly upstream: string;
  /** The port of the sidecar's data listener, the same for the sidecar that replaces it. */
  readonly sidecarPort: number;
  /** Creates the Secret of the `news` App. */
  createLaterSecret(): void;
  /** Replaces the sidecar with one whose API server fails every list, so it never syncs. */
  replaceWithUnsynced(): Promise<void>;
  /** Stops the sidecar: nothing listens on `sidecarPort` afterwards. */
  stopSidecar(): Promise<void>;
  /** Writes a Registry value the sidecar refuses whole (the last good one stays in service). */
  writeRefusedRegistry(): void;
  /** Writes the world's Registry again. */
  restoreRegistry(): void;
  /** The API server goes away for `ms` and comes back; resolves once it is back. */
  apiServerGone(ms: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts envtest with the world's Apps (`shop` ready, also claimed by `shop-eu`, which loses the
 * conflict; `blog` without its Secret; `news` whose Secret comes later; `edge` under a wildcard),
 * their upstream, and a synced sidecar on a free port, given `sidecarFlags`.
 */
export async function startRoutingWorld(
  options: { readonly sidecarFlags?: readonly string[] } = {},
): Promise<RoutingWorld> {
  const upstream = await startEchoUpstream();
  const envtest = await envtestFor();
  writeSecret(envtest, APP_NS, "shop-credentials", { token: "shop-token" });
  writeSecret(envtest, APP_NS, "edge-credentials", { token: "edge-token" });
  const apps = [
    { name: "shop", hostnames: [HOSTS.ready], namespace: APP_NS, upstream: upstream.url },
    {
      name: "shop-eu",
      hostnames: [HOSTS.ready],
      namespace: APP_NS,
      secret: "shop-credentials",
      upstream: "http://127.0.0.1:9",
    },
    { name: "blog", hostnames: [HOSTS.secretMissing], namespace: APP_NS, upstream: upstream.url },
    { name: "news", hostnames: [HOSTS.later], namespace: APP_NS, upstream: upstream.url },
    { name: "edge", hostnames: ["*.edge.example.com"], namespace: APP_NS, upstream: upstream.url },
  ];
  writeRegistry(envtest, apps);
  const sidecarPort = await freePort();
  const start = () =>
    startTestSidecar(envtest, {
      flags: ["--listen", `127.0.0.1:${sidecarPort}`, ...(options.sidecarFlags ?? [])],
    });
  let sidecar: TestSidecar | null = await start();
  await waitForReadyz(sidecar, 200);

  async function stopSidecar(): Promise<void> {
    const stopping = sidecar;
    sidecar = null;
    await stopping?.stop();
  }
  return {
    envtest,
    upstream: upstream.url,
    sidecarPort,
    createLaterSecret: () => writeSecret(envtest, APP_NS, "news-credentials", { token: "n" }),
    async replaceWithUnsynced() {
      await stopSidecar();
      envtest.faults.failNext({ verb: "list", count: Number.MAX_SAFE_INTEGER, status: 500 });
      sidecar = await start();
      await waitForReadyz(sidecar, 503);
    },
    stopSidecar,
    writeRefusedRegistry: () => {
      writeRegistryValue(envtest, '{"apiVersion":"replica-mirror/v2","apps":[]}');
    },
    restoreRegistry: () => {
      writeRegistry(envtest, apps);
    },
    apiServerGone: (ms) => envtest.restart({ downMs: ms }),
    async close() {
      await stopSidecar();
      await envtest.close();
      await upstream.close();
    },
  };
}

async function waitForReadyz(sidecar: TestSidecar, status: number): Promise<void> {
  await waitUntil(
    () => fetch(`http://127.0.0.1:${sidecar.ops.port}/readyz`).then((r) => r.status === status),
    { timeoutMs: 10_000, intervalMs: 25, what: `the sidecar's /readyz to answer ${status}` },
  );
}

/** What the client sees of one answer through a data plane. */
export interface ClientAnswer {
  readonly status: number;
  readonly reason: string | null;
  readonly retryAfter: string | null;
  readonly body: string;
}

/** A client request: its Host, and optionally a method, path, body and more headers. */
interface ClientRequest {
  readonly host: string;
  readonly method?: string;
  readonly path?: string;
  readonly body?: Uint8Array;
  readonly headers?: Record<string, string>;
}

/** One request to 127.0.0.1:`port` on its own connection; node:http, as fetch refuses a Host. */
export function through(port: number, request: ClientRequest): Promise<ClientAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: request.method ?? "GET",
        path: request.path ?? "/orders/42",
        headers: { ...request.headers, host: request.host },
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            reason: (res.headers["x-mirror-reason"] as string | undefined) ?? null,
            retryAfter: (res.headers["retry-after"] as string | undefined) ?? null,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error(`request for ${request.host} timed out`)));
    req.on("error", reject);
    req.end(request.body === undefined ? undefined : Buffer.from(request.body));
  });
}

/** A data plane running as a child process. */
export interface DataPlaneProcess {
  /** Its process id (nginx: the master's; its workers are its children). */
  readonly pid: number;
  /** Its output so far (stdout and stderr), for failure messages. */
  log(): string;
  /** Stops it; kills it when it has not exited after 5 s. */
  stop(): Promise<void>;
}

/** Spawns a data plane and waits (bounded) until it answers HTTP on 127.0.0.1:`port`. */
export async function startDataPlane(
  command: string,
  args: readonly string[],
  port: number,
  env: Record<string, string> = {},
): Promise<DataPlaneProcess> {
  const output: string[] = [];
  const child: ChildProcess = spawn(command, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const plane: DataPlaneProcess = {
    pid: child.pid ?? -1,
    log: () => output.join(""),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
        return through(port, { host: HOSTS.unknown }).then(() => true);
      },
      { timeoutMs: 10_000, intervalMs: 50, what: `${command} to answer on port ${port}` },
    );
  } catch (e) {
    await plane.stop();
    throw new Error(`${(e as Error).message}\n${plane.log()}`);
  }
  return plane;
}

/** The shipped data planes, by the name of their program. */
export type PlaneKind = "nginx" | "caddy" | "haproxy";

/** Where a data plane runs: its own port, a scratch directory, and the sidecar's port. */
export interface PlaneSetup {
  readonly port: number;
  readonly dir: string;
  readonly sidecarPort: number;
}

/** How to start a data plane whose configuration is written: its arguments and environment. */
export interface PlaneLaunch {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** The program of a data plane, where Debian installs it (see `findTool`). */
export function findPlane(kind: PlaneKind): Tool {
  switch (kind) {
    case "nginx":
      return findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);
    case "caddy":
      return findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]);
    case "haproxy":
      return findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]);
  }
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const NGINX_MODULES = "/usr/lib/nginx/modules";
const shipped = (path: string) => readFile(join(ROOT, path), "utf8");

/**
 * Writes `kind`'s shipped configuration into `setup.dir`, changed only for this machine: its
 * listen port on 127.0.0.1, the sidecar's port, scratch paths, and no cluster DNS resolver (the
 * upstreams are IP addresses). Throws when a line it rewrites is no longer in the shipped file.
 */
export async function writeShippedConfig(kind: PlaneKind, setup: PlaneSetup): Promise<PlaneLaunch> {
  const { port, dir, sidecarPort } = setup;
  const sidecar = `127.0.0.1:${sidecarPort}`;
  switch (kind) {
    case "nginx": {
      const conf = rewrite(await shipped("manifests/base/nginx.conf"), [
        [/\/tmp\//g, `${dir}/`],
        [/^\s*resolver .*$/m, ""],
        // The test's stderr is a socket, which nginx cannot open as /dev/stderr.
        ["error_log /dev/stderr warn;", `error_log ${dir}/error.log warn;`],
        ["listen 8000;", `listen 127.0.0.1:${port};`],
        ["server 127.0.0.1:8080", `server ${sidecar}`],
      ]);
      await writeFile(join(dir, "nginx.conf"), conf);
      // Debian's modules-enabled files load `modules/<name>.so` under nginx's prefix, which is
      // /usr/share/nginx (a link to this) in a real start and the scratch directory here.
      await symlink(NGINX_MODULES, join(dir, "modules"));
      // Run as root (CI), nginx's workers are `nobody`: they must reach the body temp directory.
      await chmod(dir, 0o755);
      return { args: ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], env: {} };
    }
    case "caddy": {
      const conf = rewrite(await shipped("manifests/data-planes/caddy/Caddyfile"), [
        [":8000 {", `:${port} {\n\tbind 127.0.0.1`],
        ["forward_auth 127.0.0.1:8080 {", `forward_auth ${sidecar} {`],
      ]);
      const path = join(dir, "Caddyfile");
      await writeFile(path, conf);
      // Caddy keeps state under $HOME and the XDG directories: the scratch directory, not root's.
      const env = { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
      return { args: ["run", "--config", path, "--adapter", "caddyfile"], env };
    }
    case "haproxy": {
      const lua = join(dir, "replica-mirror.lua");
      await copyFile(join(ROOT, "manifests/data-planes/haproxy/replica-mirror.lua"), lua);
      const conf = rewrite(await shipped("manifests/data-planes/haproxy/haproxy.cfg"), [
        ["/usr/local/etc/haproxy/replica-mirror.lua", lua],
        ["bind :8000", `bind 127.0.0.1:${port}`],
        ["http://127.0.0.1:8080/v1/route", `http://${sidecar}/v1/route`],
      ]);
      await writeFile(join(dir, "haproxy.cfg"), conf);
      return { args: ["-db", "-f", join(dir, "haproxy.cfg")], env: {} };
    }
  }
}

/** `text` with each `[from, to]` replaced; throws naming a `from` that is not in `text`. */
function rewrite(text: string, replacements: readonly [string | RegExp, string][]): string {
  let out = text;
  for (const [from, to] of replacements) {
    const found = typeof from === "string" ? out.includes(from) : new RegExp(from).test(out);
    if (!found) throw new Error(`the shipped configuration no longer has ${String(from)}`);
    out = out.replace(from, to);
  }
  return out;
}
