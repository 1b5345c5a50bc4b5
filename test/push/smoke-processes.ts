// The processes of the zero-hop smoke measurements (test/push/smoke-*.ts): each proxy with a
// static route to the upstream (its baseline), the upstream itself, and a spawned process measured
// from /proc with its children (nginx's workers).

import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import { cpuMicros } from "../../bench/proc-stats.ts";
import type { ServerProcess } from "../../bench/server-process.ts";
import { freePort } from "../support/data-plane.ts";
import { waitUntil } from "../support/wait.ts";
import {
  caddyLaunch,
  haproxyLaunch,
  nginxLaunch,
  type ProxyLaunch,
} from "../support/zero-hop-proxies.ts";

/** Each proxy's Debian binary and its shipped zero-hop configuration, by name. */
export const LAUNCHES: Record<
  string,
  [string, (binary: string, dir: string) => Promise<ProxyLaunch>]
> = {
  haproxy: ["/usr/sbin/haproxy", haproxyLaunch],
  caddy: ["/usr/bin/caddy", caddyLaunch],
  nginx: ["/usr/sbin/nginx", nginxLaunch],
};

// HAProxy's shipped configurations log every request to stdout; left out of both sides by default,
// as the cost measured is the routing's (SMOKE_LOGS=1 keeps them).
export const LOGS = process.env.SMOKE_LOGS === "1";
export const quiet = (conf: string) =>
  LOGS ? conf : conf.replace(/^\s*(log stdout .*|log global|option httplog)$/gm, "");

/** A spawned process, measured from /proc: its CPU and its children's (nginx's workers). */
export function spawned(
  name: string,
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  port: number,
): ServerProcess {
  const child: ChildProcess = spawn(command, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const out: string[] = [];
  child.stdout?.on("data", (d: Buffer) => out.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => out.push(d.toString()));
  const pid = child.pid!;
  // A failed run must leave no proxy behind.
  process.once("exit", () => child.kill("SIGKILL"));
  const tree = (p: number): number[] => {
    const kids = readdirSync(`/proc/${p}/task`).flatMap((t) =>
      readFileSync(`/proc/${p}/task/${t}/children`, "utf8")
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
    return [p, ...kids.flatMap(tree)];
  };
  return {
    name,
    pid,
    dataPort: port,
    opsPort: port,
    spawnedAt: performance.now(),
    rss: () => 0,
    cpuMicros: () => tree(pid).reduce((sum, p) => sum + cpuMicros(p), 0),
    output: () => out.join(""),
    stop: async () => {
      if (child.exitCode !== null) return;
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    },
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request for `host` on a kept-alive connection: its status. */
export function status(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: "127.0.0.1", port, path: "/", headers: { host }, agent },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
  });
}

/** Waits until something answers HTTP on `port`. */
export async function answering(port: number): Promise<void> {
  await waitUntil(() => status(port, "app-1.example.com").then(() => true), {
    timeoutMs: 20_000,
    what: `port ${port}`,
  });
}

/** Closes the kept-alive connections. */
export function closeAgent(): void {
  agent.destroy();
}

export interface Baseline {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly port: number;
}

/** The same proxy with one static route to `upstream` (host:port) and nothing else. */
export async function baselineOf(
  proxy: string,
  binary: string,
  dir: string,
  upstream: string,
): Promise<Baseline> {
  const port = await freePort();
  if (proxy === "haproxy") {
    const shipped = await readFile("manifests/data-planes/haproxy/zero-hop/haproxy.cfg", "utf8");
    const head = quiet(shipped.slice(0, shipped.indexOf("resolvers cluster-dns"))).replace(
      /^\s*stats socket .*$/m,
      "",
    );
    const conf = `${head}frontend edge\n  bind 127.0.0.1:${port}\n  default_backend static\n\nbackend static\n  server upstream ${upstream}\n`;
    await writeFile(join(dir, "static.cfg"), conf);
    return { command: binary, args: ["-db", "-f", join(dir, "static.cfg")], env: {}, port };
  }
  if (proxy === "caddy") {
    const admin = await freePort();
    const conf = {
      admin: { listen: `127.0.0.1:${admin}` },
      apps: {
        http: {
          servers: {
            edge: {
              listen: [`127.0.0.1:${port}`],
              automatic_https: { disable: true },
              routes: [{ handle: [{ handler: "reverse_proxy", upstreams: [{ dial: upstream }] }] }],
            },
          },
        },
      },
    };
    await writeFile(join(dir, "static.json"), JSON.stringify(conf));
    return {
      command: binary,
      args: ["run", "--config", join(dir, "static.json")],
      env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
      port,
    };
  }
  const conf = `worker_processes 1;\npid ${dir}/static.pid;\nerror_log ${dir}/static-error.log warn;\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/b; proxy_temp_path ${dir}/p; fastcgi_temp_path ${dir}/f; uwsgi_temp_path ${dir}/u; scgi_temp_path ${dir}/s;\n  upstream static { server ${upstream}; keepalive 64; }\n  server {\n    listen 127.0.0.1:${port};\n    proxy_http_version 1.1;\n    proxy_set_header Connection "";\n    proxy_set_header Host $http_host;\n    location / { proxy_pass http://static; }\n  }\n}\n`;
  await writeFile(join(dir, "static.conf"), conf);
  return {
    command: binary,
    args: ["-p", dir, "-c", join(dir, "static.conf"), "-g", "daemon off;"],
    env: {},
    port,
  };
}

/** nginx answering every request with 200 from memory: the upstream every proxy routes to. */
export async function startUpstream(
  dir: string,
): Promise<{ address: string; process: ServerProcess }> {
  const port = await freePort();
  const conf = `worker_processes 1;\npid ${dir}/up.pid;\nerror_log ${dir}/up-error.log warn;\nevents { worker_connections 4096; }\nhttp {\n  access_log off;\n  keepalive_requests 1000000;\n  client_body_temp_path ${dir}/ub; proxy_temp_path ${dir}/up; fastcgi_temp_path ${dir}/uf; uwsgi_temp_path ${dir}/uu; scgi_temp_path ${dir}/us;\n  server { listen 127.0.0.1:${port}; location / { return 200 "ok\\n"; } }\n}\n`;
  await writeFile(join(dir, "upstream.conf"), conf);
  const p = spawned(
    "upstream",
    "/usr/sbin/nginx",
    ["-p", dir, "-c", join(dir, "upstream.conf"), "-g", "daemon off;"],
    {},
    port,
  );
  await answering(port);
  return { address: `127.0.0.1:${port}`, process: p };
}
