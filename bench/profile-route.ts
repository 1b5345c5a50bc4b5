// `npm run bench:profile`: CPU profiles (`--cpu-prof`) of the shipped process, the bare Fastify
// baseline and the data server alone under the same wrk load (10k Apps, random hosts), and their
// self time by function and by package, per request: what the data path adds. Not part of the
// measured runs (a profiler slows the process down); for finding where time goes.
// Usage: node bench/profile-route.ts [SECONDS] [CONNECTIONS]

import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./child.ts";
import { startCluster } from "./cluster.ts";
import { waitForStatus } from "./http-probe.ts";
import { startLoadGenerator, writeHostsFile } from "./load.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";
import { ensureBuilt, shippedCommand, startSynced } from "./shipped.ts";

const [seconds = 10, connections = 10] = process.argv.slice(2).map(Number);
const APPS = 10_000;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/**
 * Self time per function (`name file:line`) and per package, in microseconds, of the busiest
 * thread's profile in `dir`, counting only the samples of the load: the longest run of 100 ms
 * bins in which the thread was busy more than half the time (start-up, the initial lists and
 * idle waits are left out).
 */
function selfTimes(dir: string): SelfTimes {
  // One profile per thread: the data thread's (ADR 27) is the one busy under the load.
  const all = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => threadSelfTimes(join(dir, f)));
  if (all.length === 0) throw new Error(`no profile in ${dir}`);
  const busy = (t: SelfTimes) => [...t.byFunction.values()].reduce((a, b) => a + b, 0);
  return all.reduce((a, b) => (busy(b) > busy(a) ? b : a));
}

interface SelfTimes {
  byFunction: Map<string, number>;
  byPackage: Map<string, number>;
}

function threadSelfTimes(file: string): SelfTimes {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const idle = new Set(
    profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id),
  );
  // Sample i lasts timeDeltas[i + 1]; its time stamp is the running sum.
  const at: number[] = [];
  let t = 0;
  for (const d of profile.timeDeltas) {
    t += d;
    at.push(t);
  }
  const bins = new Map<number, { busy: number; all: number }>();
  profile.samples.forEach((id, i) => {
    const b = Math.floor(at[i]! / 100_000);
    const bin = bins.get(b) ?? { busy: 0, all: 0 };
    bin.all++;
    if (!idle.has(id)) bin.busy++;
    bins.set(b, bin);
  });
  let best = [0, -1];
  let start = -1;
  const last = Math.max(...bins.keys());
  for (let b = 0; b <= last + 1; b++) {
    const bin = bins.get(b);
    const busy = bin !== undefined && bin.busy > bin.all / 2;
    if (busy && start === -1) start = b;
    if (!busy && start !== -1) {
      if (b - start > best[1]! - best[0]! + 1) best = [start, b - 1];
      start = -1;
    }
  }
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const b = Math.floor(at[i]! / 100_000);
    if (b < best[0]! || b > best[1]!) return;
    const us = profile.timeDeltas[i + 1] ?? 0;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url.replace(/^.*\/(node_modules\/)/, "$1").replace(/^file:\/\/.*\//, "");
    const key = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const pkg =
      /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1] ??
      (url.startsWith("node:") ? "node internals" : url === "" ? `(${functionName})` : where);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  });
  return { byFunction, byPackage };
}

/** The `n` largest entries as µs per request. */
function top(m: Map<string, number>, n: number, requests: number): string[] {
  return [...m]
    .filter(([k]) => !k.startsWith("(idle)"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${(v / requests).toFixed(2).padStart(6)} µs  ${k}`);
}

ensureBuilt();
const command = shippedCommand();
const env = command.env;
const cluster = await startCluster(APPS);
const load = await startLoadGenerator();
const hostsFile = writeHostsFile(APPS);
const prof = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `prof-${name}-`));
  return { dir, flags: ["--cpu-prof", `--cpu-prof-dir=${dir}`] };
};
const profiled: { server: ServerProcess; dir: string }[] = [];
const shippedProf = prof("shipped");
profiled.push({
  dir: shippedProf.dir,
  server: (
    await startSynced(cluster, { env, nodeFlags: [...command.nodeFlags, ...shippedProf.flags] })
  ).server,
});
// The bare Fastify baseline and the data server alone (the diagnostic), each wrapped so that
// SIGTERM exits normally: a profile is written only on a normal exit.
for (const [name, script, ownOps] of [
  ["fastify", "./baselines/fastify.mjs", false],
  ["data-server", "./route-server.ts", true],
] as const) {
  const port = await freePort();
  const opsPort = ownOps ? await freePort() : port;
  const extra = ownOps ? [String(opsPort), String(APPS)] : [];
  const path = fileURLToPath(new URL(script, import.meta.url));
  const p = prof(name);
  // A wrapper file, not `--input-type=module -e`: the data thread's worker inherits the flags,
  // and a worker refuses `--input-type`.
  const wrapper = join(p.dir, "run.mjs");
  writeFileSync(
    wrapper,
    `process.once("SIGTERM", () => process.exit(0)); await import(${JSON.stringify(path)});\n`,
  );
  const server = startServerProcess({
    name,
    args: [...command.nodeFlags, ...p.flags, wrapper, String(port), ...extra],
    env,
    dataPort: port,
    opsPort,
  });
  await waitForStatus(opsPort, "/readyz", 200, 180_000);
  profiled.push({ server, dir: p.dir });
}
const served = new Map<string, number>();
for (const { server: s } of profiled) {
  const cpu0 = s.cpuMicros();
  const r = await load.run({
    port: s.dataPort,
    path: "/v1/route",
    seconds,
    connections,
    hostsFile,
  });
  served.set(s.name, r.requests);
  console.log(
    `${s.name}: ${(r.requests / r.seconds).toFixed(0)} req/s, ${((s.cpuMicros() - cpu0) / r.requests).toFixed(1)} µs CPU per request (profiling)`,
  );
}
await Promise.all(profiled.map((p) => p.server.stop(10_000)));
await cluster.close();
for (const { server, dir } of profiled) {
  const name = server.name;
  const t = selfTimes(dir);
  const requests = served.get(name)!;
  console.log(
    `\n## ${name}: self time by package, per request\n${top(t.byPackage, 15, requests).join("\n")}`,
  );
  console.log(
    `\n## ${name}: self time by function, per request\n${top(t.byFunction, 45, requests).join("\n")}`,
  );
}
process.exit(0);
