import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envtest, startEnvtest } from "@replica-mirror/envtest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.ts";

const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => {
  try {
    execFileSync(p, ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise((r) => server.close(r));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

let envtest: Envtest;
let sidecar: TestSidecar;
let upstream: http.Server;
let nginx: ChildProcess;
let nginxPort: number;
let dir: string;
const nginxLog: string[] = [];

beforeAll(async () => {
  if (NGINX === undefined) {
    throw new Error(
      "nginx is not installed: the end-to-end test needs it (.ci/run installs Debian's nginx)",
    );
  }
  dir = await mkdtemp(join(tmpdir(), "replica-mirror-e2e-"));
  // The App's upstream: echoes the headers nginx forwarded.
  upstream = http.createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify({
        host: req.headers.host,
        app: req.headers["x-mirror-app"] ?? null,
        path: req.url,
      }),
    );
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const upstreamPort = (upstream.address() as { port: number }).port;

  envtest = await startEnvtest();
  envtest.apply({ namespace: "tenant-a", name: "shop-credentials", data: { token: "shop-token" } });
  envtest.apply({
    namespace: "default",
    name: "replica-registry",
    data: {
      "registry.json": JSON.stringify({
        apiVersion: "replica-mirror/v1",
        apps: [
          {
            name: "shop",
            hostnames: ["shop.example.com"],
            secretRef: { namespace: "tenant-a", name: "shop-credentials", key: "token" },
            upstream: `http://127.0.0.1:${upstreamPort}`,
          },
          {
            name: "blog",
            hostnames: ["blog.example.com"],
            secretRef: { namespace: "tenant-b", name: "blog-credentials", key: "token" },
            upstream: `http://127.0.0.1:${upstreamPort}`,
          },
        ],
      }),
    },
  });
  sidecar = await startTestSidecar(envtest, {
    flags: ["--registry-namespace", "default"],
    reflector: "production",
  });

  // The README's configuration, as shipped in manifests/base/nginx.conf, with this test's ports
  // and paths: no cluster DNS resolver here, and the upstreams are IP addresses.
  nginxPort = await freePort();
  const conf = (await readFile("manifests/base/nginx.conf", "utf8"))
    .replaceAll("/tmp/", `${dir}/`)
    .replace(/^\s*resolver .*$/m, "")
    // The test's stderr is a socket, which nginx cannot open as /dev/stderr.
    .replace("error_log /dev/stderr warn;", `error_log ${dir}/error.log warn;`)
    .replace("listen 8000;", `listen 127.0.0.1:${nginxPort};`)
    .replace("http://127.0.0.1:8080/v1/route", `http://127.0.0.1:${sidecar.data.port}/v1/route`);
  await writeFile(join(dir, "nginx.conf"), conf);
  nginx = spawn(NGINX, ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  nginx.stderr?.on("data", (d: Buffer) => nginxLog.push(d.toString()));

  const deadline = Date.now() + 10_000;
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${sidecar.ops.port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    const up = await fetch(`http://127.0.0.1:${nginxPort}/`, {
      headers: { host: "nope.example.com" },
    }).then(
      () => true,
      () => false,
    );
    if (ready && up) break;
    if (Date.now() > deadline)
      throw new Error(`nginx or the sidecar did not come up: ${nginxLog.join("")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}, 30_000);

afterAll(async () => {
  nginx?.kill("SIGQUIT");
  await sidecar?.stop();
  await envtest?.close();
  await new Promise((r) => upstream?.close(r));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One request through nginx; node:http, because fetch refuses to set a Host header. */
function through(host: string, path = "/orders/42") {
  return new Promise<{
    status: number;
    reason: string | null;
    retryAfter: string | null;
    body: string;
  }>((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port: nginxPort, path, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          reason: (res.headers["x-mirror-reason"] as string | undefined) ?? null,
          retryAfter: (res.headers["retry-after"] as string | undefined) ?? null,
          body,
        }),
      );
    });
    req.on("error", reject);
  });
}

describe("nginx auth_request in front of the sidecar and envtest", () => {
  it("proxies a request for a ready App to its upstream with the App's headers", async () => {
    const answer = await through("shop.example.com");
    expect({ ...answer, body: JSON.parse(answer.body) }).toEqual({
      status: 200,
      reason: null,
      retryAfter: null,
      body: { host: "shop.example.com", app: "shop", path: "/orders/42" },
    });
  });

  it("answers 503 with the reason and Retry-After for an App whose Secret is absent", async () => {
    expect(await through("blog.example.com")).toEqual({
      status: 503,
      reason: "secret-unavailable",
      retryAfter: "5",
      body: "credentials not available yet\n",
    });
  });

  it("answers 404 for an unknown host", async () => {
    expect(await through("nope.example.com")).toEqual({
      status: 404,
      reason: "unknown-host",
      retryAfter: null,
      body: "unknown host\n",
    });
  });

  it("follows the Secret: once it is created the App is served", async () => {
    envtest.apply({
      namespace: "tenant-b",
      name: "blog-credentials",
      data: { token: "blog-token" },
    });
    const deadline = Date.now() + 5_000;
    let answer = await through("blog.example.com", "/");
    while (answer.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      answer = await through("blog.example.com", "/");
    }
    expect({ status: answer.status, app: JSON.parse(answer.body).app }).toEqual({
      status: 200,
      app: "blog",
    });
  });
});
