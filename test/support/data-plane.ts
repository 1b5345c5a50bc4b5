// Real data planes (nginx, Caddy, HAProxy) in front of an in-process sidecar: what every
// end-to-end test shares (the routing world behind them is routing-world.ts). Free ports, client
// requests with a raw Host header, the shipped configurations adapted to this machine, and the
// data-plane process. Everything listens on 127.0.0.1.

import { type ChildProcess, spawn } from "node:child_process";
import { chmod, copyFile, readFile, symlink, writeFile } from "node:fs/promises";
import http from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findTool, type Tool } from "./tools.ts";
import { waitUntil } from "./wait.ts";

/** A port nothing listens on at this moment, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise((r) => server.close(r));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** What the client sees of one answer through a data plane. */
export interface ClientAnswer {
  readonly status: number;
  readonly reason: string | null;
  readonly retryAfter: string | null;
  readonly body: string;
}

/** A client request: its Host, and optionally a method, path, body and more headers. */
export interface ClientRequest {
  readonly host: string;
  readonly method?: string;
  readonly path?: string;
  readonly body?: Uint8Array;
  readonly headers?: Record<string, string>;
}

/** One request to 127.0.0.1:`port` on its own connection; node:http, as fetch refuses a Host. */
export async function through(port: number, request: ClientRequest): Promise<ClientAnswer> {
  return (await throughWithHeaders(port, request)).answer;
}

/** `through`, and every header of the answer as Node reads them. */
export function throughWithHeaders(
  port: number,
  request: ClientRequest,
): Promise<{ readonly answer: ClientAnswer; readonly headers: http.IncomingHttpHeaders }> {
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
            answer: {
              status: res.statusCode ?? 0,
              reason: (res.headers["x-mirror-reason"] as string | undefined) ?? null,
              retryAfter: (res.headers["retry-after"] as string | undefined) ?? null,
              body: Buffer.concat(chunks).toString("utf8"),
            },
            headers: res.headers,
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
        // Any answer will do: a host no App has.
        return through(port, { host: "nope.example.com" }).then(() => true);
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
        ["reverse_proxy 127.0.0.1:8080 {", `reverse_proxy ${sidecar} {`],
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
