// A smoke-length measurement of zero-hop mode (not a test; the full bench is bench/'s): at 10k
// Apps (a wildcard on every tenth, as bench/fixtures.ts builds them), each proxy answering from
// its pushed table against the same proxy routing every request straight to the same upstream,
// in alternating rounds (bench/rounds.ts); then the time from publishing a Snapshot to a pusher
// until the proxy answers from it. Run: node test/push/smoke-bench.ts [haproxy|caddy|nginx]...
// (SMOKE_ROUNDS, SMOKE_SECONDS, SMOKE_PUSHES change the defaults of 3, 3 and 12).

import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLoadGenerator, writeHostsFile } from "../../bench/load.ts";
import { quantile } from "../../bench/measure.ts";
import { cpuMicros } from "../../bench/proc-stats.ts";
import { alternate, medianRatio } from "../../bench/rounds.ts";
import type { ServerProcess } from "../../bench/server-process.ts";
import { systemClock } from "../../src/kube/clock.ts";
import { startPusher } from "../../src/push/pusher.ts";
import { routingTable } from "../../src/push/table.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { freePort } from "../support/data-plane.ts";
import { waitUntil } from "../support/wait.ts";
import { type AppInput, snapshotOf } from "../support/world.ts";
import {
  caddyLaunch,
  haproxyLaunch,
  nginxLaunch,
  type ProxyLaunch,
} from "../support/zero-hop-proxies.ts";

const APPS = 10_000;
const ROUNDS = Number(process.env.SMOKE_ROUNDS ?? 3);
const SECONDS = Number(process.env.SMOKE_SECONDS ?? 3);
const PUSHES = Number(process.env.SMOKE_PUSHES ?? 12);
// HAProxy's shipped configurations log every request to stdout; left out of both sides by default,
// as the cost measured is the routing's (SMOKE_LOGS=1 keeps them).
const LOGS = process.env.SMOKE_LOGS === "1";
const quiet = (conf: string) =>
  LOGS ? conf : conf.replace(/^\s*(log stdout .*|log global|option httplog)$/gm, "");

/** The bench Registry of `n` Apps, every App ready and routed to `upstream`, plus `extra`. */
function snapshotFor(
  n: number,
  upstream: string,
  revision: number,
  extra: AppInput[] = [],
): Snapshot {
  const apps: AppInput[] = [...extra];
  const secrets: Record<string, Record<string, string>> = {};
  for (const a of extra) secrets[`${a.name}-credentials`] = { token: "t" };
  for (let i = 0; i < n; i++) {
    const name = `app-${i}`;
    const hostnames = [`${name}.example.com`];
    if (i % 10 === 0) hostnames.push(`*.${name}.example.com`);
    apps.push({ name, hostnames, upstream });
    secrets[`${name}-credentials`] = { token: "t" };
  }
  return snapshotOf(apps, secrets, revision);
}

/** A spawned process, measured from /proc: its CPU and its children's (nginx's workers). */
function spawned(
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
function status(port: number, host: string): Promise<number> {
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

async function answering(port: number): Promise<void> {
  await waitUntil(() => status(port, "app-1.example.com").then(() => true), {
    timeoutMs: 20_000,
    what: `port ${port}`,
  });
}

interface Baseline {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly port: number;
}

/** The same proxy with one static route to `upstream` (host:port) and nothing else. */
async function baselineOf(
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
async function startUpstream(dir: string): Promise<{ address: string; process: ServerProcess }> {
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

const BINARIES: Record<string, string> = {
  haproxy: "/usr/sbin/haproxy",
  caddy: "/usr/bin/caddy",
  nginx: "/usr/sbin/nginx",
};
const LAUNCHES: Record<string, (binary: string, dir: string) => Promise<ProxyLaunch>> = {
  haproxy: haproxyLaunch,
  caddy: caddyLaunch,
  nginx: nginxLaunch,
};

async function measure(proxy: string): Promise<void> {
  const binary = BINARIES[proxy]!;
  const dir = await mkdtemp(join(tmpdir(), `replica-mirror-smoke-${proxy}-`));
  const upstream = await startUpstream(dir);
  const launch = await LAUNCHES[proxy]!(binary, dir);
  await launch.prepare();
  if (proxy === "haproxy") {
    const cfg = join(dir, "haproxy.cfg");
    await writeFile(cfg, quiet(await readFile(cfg, "utf8")));
  }
  const zeroHop = spawned(
    `${proxy} zero-hop`,
    launch.command,
    launch.args,
    { ...launch.env },
    launch.port,
  );
  const base = await baselineOf(proxy, binary, dir, upstream.address);
  const alone = spawned(`${proxy} static route`, base.command, base.args, base.env, base.port);
  await answering(launch.port);
  await answering(base.port);
  const url = `http://${upstream.address}`;
  const t0 = performance.now();
  const first = snapshotFor(APPS, url, 1);
  const built = performance.now();
  const pushed = await launch.target.push(routingTable(first));
  if (!pushed.ok) throw new Error(`${proxy}: ${pushed.error.message}`);
  console.log(
    `${proxy}: Snapshot of ${APPS} Apps built in ${(built - t0).toFixed(0)} ms, first push ${(performance.now() - built).toFixed(0)} ms`,
  );

  const load = await startLoadGenerator();
  const hostsFile = writeHostsFile(APPS);
  const runs = await alternate([alone, zeroHop], {
    load,
    rounds: ROUNDS,
    seconds: SECONDS,
    connections: 32,
    hostsFile,
  });
  const a = runs.get(alone.name)!;
  const z = runs.get(zeroHop.name)!;
  const rps = (r: readonly { rps: number }[]) => r.map((x) => x.rps.toFixed(0)).join(" ");
  const cpu = (r: readonly { cpuPerRequestUs: number }[]) =>
    r.map((x) => x.cpuPerRequestUs.toFixed(1)).join(" ");
  console.log(
    `${proxy}: ${load.name}, ${ROUNDS} rounds of ${SECONDS} s, 32 connections, random hosts of the 10k Apps`,
  );
  console.log(
    `  static route  req/s ${rps(a)}  CPU µs/req ${cpu(a)}  p50 ${a.map((x) => x.p50Us).join(" ")} µs`,
  );
  console.log(
    `  zero-hop      req/s ${rps(z)}  CPU µs/req ${cpu(z)}  p50 ${z.map((x) => x.p50Us).join(" ")} µs`,
  );
  console.log(
    `  ratio (median of rounds): throughput ${medianRatio(z, a, (r) => r.rps).toFixed(3)}x, CPU per request ${medianRatio(z, a, (r) => r.cpuPerRequestUs).toFixed(3)}x`,
  );
  await load.close();
  await alone.stop();

  // Publish → answering: each Snapshot adds a probe host that only it serves.
  const snapshots = Array.from({ length: PUSHES }, (_, i) =>
    snapshotFor(APPS, url, 2 + i, [
      { name: `probe-${i}`, hostnames: [`probe-${i}.example.com`], upstream: url },
    ]),
  );
  const pusher = startPusher({
    target: launch.target,
    clock: systemClock,
    observer: { pushed: () => {}, failed: (e) => console.log(e), lost: () => {}, held: () => {} },
  });
  const latencies: number[] = [];
  for (const [i, snapshot] of snapshots.entries()) {
    const started = performance.now();
    pusher.publish(snapshot);
    // A reload (Caddy) closes kept-alive connections: a reset is one more try.
    while ((await status(launch.port, `probe-${i}.example.com`).catch(() => 0)) !== 200) {}
    latencies.push(performance.now() - started);
    await waitUntil(() => pusher.held() === snapshot.revision, { timeoutMs: 30_000 });
  }
  await pusher.close();
  const q = (p: number) => quantile(latencies, p).toFixed(0);
  console.log(
    `  publish → answering, ${PUSHES} pushes of 10k Apps: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${Math.max(...latencies).toFixed(0)} ms (${latencies.map((l) => l.toFixed(0)).join(" ")})`,
  );
  await zeroHop.stop();
  await upstream.process.stop();
}

for (const proxy of process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["haproxy", "caddy"])
  await measure(proxy);
agent.destroy();
