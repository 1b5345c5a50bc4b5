// The configurations the bench writes besides the shipped ones: each proxy alone, routing every
// host straight to the upstream with the same process settings as its shipped configuration
// (nginx: one worker, no access log; Caddy: no admin, no automatic HTTPS; HAProxy: the same
// global and defaults, its per-request log line included), and the upstream itself. nginx alone
// comes two ways, reaching the upstream as each of its shipped configurations does.

import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PlaneKind, PlaneLaunch } from "../../test/support/data-plane.ts";

/**
 * Where a proxy alone runs: its port, a scratch directory, the upstream's port, and whether its
 * upstream connections are pooled (nginx; the others pool them either way).
 */
export interface AloneSetup {
  readonly port: number;
  readonly dir: string;
  readonly upstreamPort: number;
  readonly pooled: boolean;
}

const nginxArgs = (dir: string) => ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"];

/** nginx's temp paths in `dir`, which a non-root nginx must be able to write. */
const nginxPaths = (dir: string) => `pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;`;
const nginxTemps = (dir: string) => `  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;`;

/** Writes `kind`'s configuration without the sidecar into `setup.dir`. */
export async function writeAloneConfig(kind: PlaneKind, setup: AloneSetup): Promise<PlaneLaunch> {
  const { port, dir, upstreamPort } = setup;
  const upstream = `127.0.0.1:${upstreamPort}`;
  switch (kind) {
    case "nginx": {
      await writeFile(
        join(dir, "nginx.conf"),
        setup.pooled ? nginxPooled(setup) : nginxAlone(setup),
      );
      await chmod(dir, 0o755);
      return { args: nginxArgs(dir), env: {} };
    }
    case "caddy": {
      const path = join(dir, "Caddyfile");
      await writeFile(
        path,
        `{
\tadmin off
\tauto_https off
}

:${port} {
\tbind 127.0.0.1
\treverse_proxy ${upstream}
}
`,
      );
      const env = { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
      return { args: ["run", "--config", path, "--adapter", "caddyfile"], env };
    }
    case "haproxy": {
      const path = join(dir, "haproxy.cfg");
      await writeFile(
        path,
        `global
  log stdout format raw local0 info

defaults
  mode http
  log global
  option httplog
  timeout connect 1s
  timeout client 30s
  timeout server 30s

frontend edge
  bind 127.0.0.1:${port}
  default_backend apps

backend apps
  server upstream ${upstream}
`,
      );
      return { args: ["-db", "-f", path], env: {} };
    }
  }
}

/**
 * `proxy_pass` to a literal address, like the shipped hop `proxy_pass $mirror_upstream`: a new
 * HTTP/1.0 connection to the upstream per request in both.
 */
const nginxAlone = ({ port, dir, upstreamPort }: AloneSetup) => `worker_processes 1;
${nginxPaths(dir)}
events { worker_connections 1024; }
http {
  access_log off;
${nginxTemps(dir)}
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_set_header Host $host;
      proxy_pass http://127.0.0.1:${upstreamPort};
    }
  }
}
`;

/** An `upstream` with `keepalive 64` over HTTP/1.1, as the shipped zero-hop nginx.conf has. */
const nginxPooled = ({ port, dir, upstreamPort }: AloneSetup) => `worker_processes 1;
${nginxPaths(dir)}
events { worker_connections 1024; }
http {
  access_log off;
${nginxTemps(dir)}
  upstream apps {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $http_host;
    location / { proxy_pass http://apps; }
  }
}
`;

/**
 * The upstream every variant routes to: nginx answering `200 ok` to every request from two
 * workers, keeping client connections as long as the client does, and `stub_status` on
 * `statusPort` (how many connections it accepted, how many requests it served).
 */
export async function writeUpstreamConfig(o: {
  readonly dir: string;
  readonly port: number;
  readonly statusPort: number;
}): Promise<readonly string[]> {
  await writeFile(
    join(o.dir, "nginx.conf"),
    `worker_processes 2;
${nginxPaths(o.dir)}
events { worker_connections 4096; }
http {
  access_log off;
${nginxTemps(o.dir)}
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${o.port} backlog=4096;
    location / {
      default_type text/plain;
      return 200 "ok\\n";
    }
  }
  server {
    listen 127.0.0.1:${o.statusPort};
    location / { stub_status; }
  }
}
`,
  );
  await chmod(o.dir, 0o755);
  return nginxArgs(o.dir);
}
