// The configurations the bench writes besides the shipped ones: each proxy alone, routing every
// host straight to the upstream with the same process settings as its shipped configuration
// (nginx: one worker, no access log; Caddy: no admin, no automatic HTTPS; HAProxy: the same
// global and defaults, its per-request log line included), and the upstream itself. nginx alone
// comes two ways, reaching the upstream as each of its shipped configurations does. Any of them
// may set a fixed `Authorization` on every upstream request: what a credential costs the proxy
// and the upstream however it gets there.

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
  /**
   * The `Authorization` set on every upstream request; none when absent. Written into the
   * configuration as it is: no `"`, `$`, `%` or `\\` in it.
   */
  readonly authorization?: string;
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
  const { port, dir, upstreamPort, authorization } = setup;
  if (authorization !== undefined && /["$%\\]/.test(authorization))
    throw new Error("an alone configuration's Authorization must not need quoting");
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
\treverse_proxy ${upstream}${caddyAuthorization(authorization)}
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
${haproxyAuthorization(authorization)}  server upstream ${upstream}
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
const nginxAlone = ({ port, dir, upstreamPort, authorization }: AloneSetup) => `worker_processes 1;
${nginxPaths(dir)}
events { worker_connections 1024; }
http {
  access_log off;
${nginxTemps(dir)}
${nginxAuthorizationMaps(authorization)}  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_set_header Host $host;
${nginxAuthorization(authorization, "      ")}      proxy_pass http://127.0.0.1:${upstreamPort};
    }
  }
}
`;

/** An `upstream` with `keepalive 64` over HTTP/1.1, as the shipped zero-hop nginx.conf has. */
const nginxPooled = ({ port, dir, upstreamPort, authorization }: AloneSetup) => `worker_processes 1;
${nginxPaths(dir)}
events { worker_connections 1024; }
http {
  access_log off;
${nginxTemps(dir)}
${nginxAuthorizationMaps(authorization)}  upstream apps {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $http_host;
${nginxAuthorization(authorization, "    ")}    location / { proxy_pass http://apps; }
  }
}
`;

const caddyAuthorization = (authorization: string | undefined) =>
  authorization === undefined ? "" : ` {\n\t\theader_up Authorization "${authorization}"\n\t}`;

const haproxyAuthorization = (authorization: string | undefined) =>
  authorization === undefined ? "" : `  http-request set-header authorization "${authorization}"\n`;

/**
 * Beside the other `proxy_set_header` lines, which must be at the same level: nginx inherits them
 * from an outer level only where a level has none.
 */
const nginxAuthorization = (authorization: string | undefined, indent: string) => {
  if (authorization === undefined) return "";
  const parts = nginxParts(authorization);
  const value =
    parts.length === 1 ? authorization : parts.map((_, i) => `$bench_authorization_${i}`).join("");
  return `${indent}proxy_set_header Authorization "${value}";\n`;
};

/**
 * nginx reads no configuration parameter longer than its 4 KiB buffer: a longer `Authorization`
 * is joined from a `map` per part (http level), each part at most this long.
 */
const NGINX_PART_BYTES = 2048;

const nginxParts = (value: string) =>
  Array.from({ length: Math.ceil(value.length / NGINX_PART_BYTES) }, (_, i) =>
    value.slice(i * NGINX_PART_BYTES, (i + 1) * NGINX_PART_BYTES),
  );

const nginxAuthorizationMaps = (authorization: string | undefined) => {
  const parts = authorization === undefined ? [] : nginxParts(authorization);
  if (parts.length < 2) return "";
  return parts
    .map((part, i) => `  map $host $bench_authorization_${i} { default "${part}"; }\n`)
    .join("");
};

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
