import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envtest, seedDemo, startEnvtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let envtest: Envtest;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  envtest = await startEnvtest();
  seedDemo(envtest);
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-serve-"));
  kubeconfig = join(dir, "kubeconfig");
  await envtest.writeKubeconfig(kubeconfig);
});
afterAll(async () => {
  await envtest.close();
  await rm(dir, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  lines: string[];
  exit: Promise<{ code: number | null; signal: string | null }>;
}

function run(command: string, args: string[]): Running {
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, REPLICA_MIRROR_LOG_LEVEL: "info" },
  });
  const lines: string[] = [];
  let buffered = "";
  const collect = (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    lines.push(...parts);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, exit };
}

async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const serveArgs = () => [
  "serve",
  "--kubeconfig",
  kubeconfig,
  "--registry-namespace",
  "default",
  "--listen",
  "127.0.0.1:0",
  "--ops-listen",
  "127.0.0.1:0",
];

async function addresses(r: Running): Promise<{ data: string; ops: string }> {
  return until(
    () => {
      for (const line of r.lines) {
        if (!line.startsWith("{")) continue;
        const entry = JSON.parse(line) as {
          msg?: string;
          listen?: { host: string; port: number };
          opsListen?: { host: string; port: number };
        };
        if (entry.msg === "listening" && entry.listen && entry.opsListen) {
          return {
            data: `http://${entry.listen.host}:${entry.listen.port}`,
            ops: `http://${entry.opsListen.host}:${entry.opsListen.port}`,
          };
        }
      }
      return undefined;
    },
    15_000,
    `the "listening" log line; output so far:\n${r.lines.join("\n")}`,
  );
}

describe("replica-mirror serve as a process", () => {
  it("`npm start -- serve` becomes ready against envtest, answers, and exits 0 on SIGTERM", async () => {
    const r = run("npm", ["start", "--silent", "--", ...serveArgs()]);
    try {
      const { data, ops } = await addresses(r);
      await until(
        async () => ((await fetch(`${ops}/readyz`)).status === 200 ? true : undefined),
        15_000,
        "/readyz 200",
      );
      const answers = await Promise.all(
        ["shop.example.com", "blog.example.com", "nope.example.com"].map(async (host) => {
          const res = await fetch(`${data}/v1/route`, { headers: { "x-forwarded-host": host } });
          return [res.status, res.headers.get("x-mirror-app"), res.headers.get("x-mirror-reason")];
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
      expect(r.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    } finally {
      r.child.kill("SIGKILL");
    }
  }, 40_000);

  it("exits 0 on SIGTERM when run directly, and stops listening", async () => {
    const r = run(process.execPath, ["src/cli/main.ts", ...serveArgs()]);
    try {
      const { data, ops } = await addresses(r);
      await until(
        async () => ((await fetch(`${ops}/readyz`)).status === 200 ? true : undefined),
        15_000,
        "/readyz 200",
      );
      r.child.kill("SIGTERM");
      const exit = await r.exit;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(r.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
      await expect(
        fetch(`${data}/v1/route`, { headers: { host: "shop.example.com" } }),
      ).rejects.toThrow();
    } finally {
      r.child.kill("SIGKILL");
    }
  }, 40_000);

  it("exits 2 with one line naming a bad flag", async () => {
    const r = run(process.execPath, ["src/cli/main.ts", "serve", "--watch-timeout", "soon"]);
    const exit = await r.exit;
    expect({ code: exit.code, lines: r.lines.filter((l) => l !== "") }).toEqual({
      code: 2,
      lines: ["replica-mirror: --watch-timeout: Invalid input: expected number, received NaN"],
    });
  });

  it("exits 1 with a clear log line when no kubeconfig can be found", async () => {
    const r = run(process.execPath, [
      "src/cli/main.ts",
      "serve",
      "--kubeconfig",
      join(dir, "missing"),
      "--listen",
      "127.0.0.1:0",
      "--ops-listen",
      "127.0.0.1:0",
    ]);
    const exit = await r.exit;
    expect(exit.code).toBe(1);
    expect(r.lines.some((l) => l.includes('"msg":"cannot start"'))).toBe(true);
  });
});

describe("replica-mirror registry validate", () => {
  it("prints path-named errors and exits 1 on an invalid document, a summary and 0 on a valid one", async () => {
    const bad = join(dir, "bad.json");
    await writeFile(
      bad,
      JSON.stringify({
        apiVersion: "replica-mirror/v1",
        apps: [{ name: "a", hostnames: ["a.example:80"], secretRef: { name: "s", key: "k" } }],
      }),
    );
    const invalid = run(process.execPath, ["src/cli/main.ts", "registry", "validate", bad]);
    expect((await invalid.exit).code).toBe(1);
    expect(invalid.lines.filter((l) => l !== "")).toEqual([
      `${bad}: apps[0].hostnames[0]: port not allowed`,
    ]);

    const good = join(dir, "good.json");
    await writeFile(
      good,
      JSON.stringify({
        apiVersion: "replica-mirror/v1",
        apps: [
          { name: "a", hostnames: ["a.example", "*.example"], secretRef: { name: "s", key: "k" } },
          { name: "b", hostnames: ["a.example"], secretRef: { name: "s", key: "k" } },
        ],
      }),
    );
    const valid = run(process.execPath, ["src/cli/main.ts", "registry", "validate", good]);
    expect((await valid.exit).code).toBe(0);
    expect(valid.lines.filter((l) => l !== "")).toEqual([
      `${good}: valid: 2 Apps, 2 hostnames`,
      `${good}: warning: a.example is claimed by a, b; a serves it`,
    ]);
  });
});
