// `replica-mirror serve` and `registry validate` as processes: start-up through `npm start`,
// SIGTERM, exit codes for bad flags and a missing kubeconfig, and validation output.

import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { demoServe } from "../support/demo-serve.ts";
import { get, untilReady } from "../support/http.ts";
import { type Command, listeningPorts, startCommand } from "../support/process.ts";
import { serveFlags } from "../support/serve-flags.ts";
import { waitUntil } from "../support/wait.ts";
import { registryDoc } from "../support/world.ts";

const demo = demoServe();
const { serveArgs } = demo;

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [
    "scripts/build.ts",
    "--outdir",
    join(demo.dir, "dist"),
  ]);
}, 60_000);

const run = (command: string, args: string[]): Command =>
  startCommand(command, args, { env: { ...process.env, REPLICA_MIRROR_LOG_LEVEL: "info" } });

/** Every non-empty line the command wrote. */
const linesOf = (r: Command) => r.lines().filter((l) => l !== "");

/** The listeners of a `serve` command, once it logged them and /readyz answers 200. */
async function ready(r: Command): Promise<{ data: number; ops: number }> {
  const ports = await listeningPorts(r, 15_000);
  await untilReady(ports.ops, { intervalMs: 20 });
  return ports;
}

describe("replica-mirror serve as a process", () => {
  it("`npm start -- serve` becomes ready against envtest, answers, and exits 0 on SIGTERM", async () => {
    const r = run("npm", ["start", "--silent", "--", ...serveArgs()]);
    try {
      const { data } = await ready(r);
      const answers = await Promise.all(
        ["shop.example.com", "blog.example.com", "nope.example.com"].map(async (host) => {
          const res = await get(data, "/v1/route", { "x-forwarded-host": host });
          return [
            res.status,
            res.headers["x-mirror-app"] ?? null,
            res.headers["x-mirror-reason"] ?? null,
          ];
        }),
      );
      expect(answers).toEqual([
        [200, "shop", null],
        [503, "blog", "secret-unavailable"],
        [404, null, "unknown-host"],
      ]);
      const t0 = Date.now();
      r.child.kill("SIGTERM");
      const exit = await r.exit;
      // The npm script execs node, so the signal reaches the sidecar itself (a `sh -c` in
      // between would swallow it and orphan the sidecar); "close" waits for every process
      // holding the output pipes.
      expect({ exit, fast: Date.now() - t0 < 5_000 }).toEqual({
        exit: { code: 0, signal: null },
        fast: true,
      });
      expect(r.lines().some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    } finally {
      r.child.kill("SIGKILL");
    }
  }, 40_000);

  it("releases start-up memory once in each thread after it is ready, exits 0 on SIGTERM when run directly, and stops listening", async () => {
    const r = run(process.execPath, ["src/cli/main.ts", ...serveArgs()]);
    try {
      const { data } = await ready(r);
      const released = () =>
        r.logLines().filter((l) => typeof l.msg === "string" && l.msg.endsWith("memory released"));
      await waitUntil(() => released().length === 2, {
        timeoutMs: 10_000,
        what: "both threads' collections",
      });
      const pair = [expect.any(Number), expect.any(Number)];
      const line = (msg: string) => ({
        level: 30,
        time: 0,
        pid: 0,
        hostname: "",
        name: "replica-mirror",
        ms: expect.any(Number),
        rssMiB: pair,
        heapTotalMiB: pair,
        heapUsedMiB: pair,
        msg,
      });
      expect(released().map((l) => ({ ...l, time: 0, pid: 0, hostname: "" }))).toEqual([
        line("start-up memory released"),
        line("the data thread's start-up memory released"),
      ]);
      // The main thread's pause would hold back the first `/readyz` 200 (ADR 73): it comes after.
      const order = r
        .logLines()
        .map((l) => l.msg)
        .filter((m) => m === "start-up memory released" || String(m).startsWith("ready:"));
      expect(order).toEqual([
        "ready: the data listener answers from the first Snapshot",
        "start-up memory released",
      ]);
      r.child.kill("SIGTERM");
      const exit = await r.exit;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(r.lines().some((l) => l.includes('"msg":"stopped"'))).toBe(true);
      await expect(get(data, "/v1/route", { host: "shop.example.com" })).rejects.toThrow();
    } finally {
      r.child.kill("SIGKILL");
    }
  }, 40_000);

  it("from the bundle, answers the route on its data thread and the status API on the ops port", async () => {
    // The bundle starts the data thread from its own CommonJS file (ADR 27), not the sources.
    const r = run(process.execPath, [join(demo.dir, "dist", "main.mjs"), ...serveArgs()]);
    try {
      const { data, ops } = await ready(r);
      const route = await get(data, "/v1/route", { host: "shop.example.com" });
      const apps = JSON.parse((await get(ops, "/v1/apps")).body) as { apps: { name: string }[] };
      const metrics = await get(ops, "/metrics");
      expect({
        route: [route.status, route.headers["x-mirror-app"]],
        apps: apps.apps.map((a) => a.name),
        counted: metrics.body.includes('replica_mirror_route_answers_total{outcome="routed"} 1'),
      }).toEqual({ route: [200, "shop"], apps: ["blog", "shop"], counted: true });
      r.child.kill("SIGTERM");
      expect(await r.exit).toEqual({ code: 0, signal: null });
    } finally {
      r.child.kill("SIGKILL");
    }
  }, 40_000);

  it("exits 2 with one line naming a bad flag", async () => {
    const r = run(process.execPath, ["src/cli/main.ts", "serve", "--watch-timeout", "soon"]);
    const exit = await r.exit;
    expect({ code: exit.code, lines: linesOf(r) }).toEqual({
      code: 2,
      lines: ["replica-mirror: --watch-timeout: Invalid input: expected number, received NaN"],
    });
  });

  it("exits 2 with the reason when asked to read every Secret of the cluster unasked", async () => {
    const r = run(process.execPath, ["src/cli/main.ts", "serve", "--listen", "127.0.0.1:0"]);
    const exit = await r.exit;
    expect({ code: exit.code, lines: linesOf(r) }).toEqual({
      code: 2,
      lines: [
        "replica-mirror: --secret-namespaces: empty, and no --secret-selector: the sidecar would read every Secret in the cluster; name the App Secrets' namespaces, label them and pass --secret-selector, or pass --allow-cluster-wide-secrets true",
      ],
    });
  });

  it("exits 1 with a clear log line when no kubeconfig can be found", async () => {
    const r = run(process.execPath, [
      "src/cli/main.ts",
      "serve",
      ...serveFlags(join(demo.dir, "missing"), "default"),
    ]);
    const exit = await r.exit;
    expect(exit.code).toBe(1);
    expect(r.lines().some((l) => l.includes('"msg":"cannot start"'))).toBe(true);
  });
});

describe("replica-mirror registry validate", () => {
  it("prints path-named errors and exits 1 on an invalid document, a summary and 0 on a valid one", async () => {
    const bad = join(demo.dir, "bad.json");
    await writeFile(
      bad,
      JSON.stringify(
        registryDoc([{ name: "a", hostnames: ["a.example:80"], secret: "s", key: "k" }]),
      ),
    );
    const invalid = run(process.execPath, ["src/cli/main.ts", "registry", "validate", bad]);
    expect((await invalid.exit).code).toBe(1);
    expect(linesOf(invalid)).toEqual([`${bad}: apps[0].hostnames[0]: port not allowed`]);

    const good = join(demo.dir, "good.json");
    await writeFile(
      good,
      JSON.stringify(
        registryDoc([
          { name: "a", hostnames: ["a.example", "*.a.example"], secret: "s", key: "k" },
          { name: "b", hostnames: ["a.example"], secret: "s", key: "k" },
        ]),
      ),
    );
    const valid = run(process.execPath, ["src/cli/main.ts", "registry", "validate", good]);
    expect((await valid.exit).code).toBe(0);
    expect(linesOf(valid)).toEqual([
      `${good}: valid: 2 Apps, 2 hostnames`,
      `${good}: warning: a.example is claimed by a, b; a serves it`,
    ]);
  });
});
