// Who the status API answers (issue 42, item 6), through the real ops listener on 127.0.0.1. The
// peer off loopback is a real one: the client binds its end to an address of one of this
// machine's own interfaces, so the server sees that address and the production peer check judges
// it, unchanged. A machine with no such address skips these cases; loopback-peer.test.ts still
// pins the rule.

import http from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER } from "../../src/answers/route-answer.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createOpsServer, type OpsServer } from "../../src/ops/ops-server.ts";
import { createStatusApp } from "../../src/ops/status-app.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { snapshotOf } from "../support/world.ts";

/** An IPv4 address of this machine off loopback, to connect from. */
const OFF_LOOPBACK = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && !a.internal && a.family === "IPv4")?.address;

const LOOPBACK = "127.0.0.1";
const TEXT = "text/plain; charset=utf-8";
const DENIED = "the status API answers loopback peers only (--allow-remote-status-api)";
const ROUTED = "the status API does not answer a request a data plane routed (x-mirror-app)";

const open: OpsServer[] = [];
afterEach(async () => {
  for (const { server, closeStatusApi } of open.splice(0)) {
    await new Promise((r) => server.close(r));
    await closeStatusApi();
  }
});

/** A ready ops listener on 127.0.0.1, and how many requests reached its status API. */
async function ops(allowRemoteStatusApi?: boolean) {
  const holder = new SnapshotHolder();
  holder.swap(snapshotOf(null, {}, 1));
  const statusApp = createStatusApp({ holder, logger: false, retryAfter: DEFAULT_RETRY_AFTER });
  let loads = 0;
  statusApp.addHook("onRequest", async () => {
    loads += 1;
  });
  const server = createOpsServer({
    holder,
    metrics: createMetrics(),
    retryAfter: DEFAULT_RETRY_AFTER,
    statusApp,
    ...(allowRemoteStatusApi === undefined ? {} : { allowRemoteStatusApi }),
  });
  open.push(server);
  await new Promise<void>((resolve) => server.server.listen(0, LOOPBACK, resolve));
  return { port: (server.server.address() as AddressInfo).port, loads: () => loads };
}

/** One request from `source` (the client's end of the connection) to the listener on `port`. */
function from(
  source: string,
  port: number,
  path: string,
  method = "GET",
  headers: Record<string, string> = {},
) {
  return new Promise<{ status: number; type: string | undefined; body: string }>(
    (resolve, reject) => {
      const req = http.request(
        {
          host: LOOPBACK,
          port,
          path,
          method,
          headers,
          localAddress: source,
          agent: false,
          timeout: 5_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              type: res.headers["content-type"],
              body: Buffer.concat(chunks).toString("utf8"),
            }),
          );
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${path}: no answer`)));
      req.on("error", reject);
      req.end();
    },
  );
}

/** The status and, for the status API's JSON, the revision; else the body. */
async function seen(source: string, port: number, path: string, method = "GET") {
  const r = await from(source, port, path, method);
  const json = r.type?.startsWith("application/json") === true;
  return [method, path, r.status, json ? JSON.parse(r.body).revision : r.body];
}

// Skipped only on a machine with no IPv4 address off loopback to connect from (a container with
// no network at all); CI's machines have one. Which peers count as loopback is tested apart
// (test/ops/loopback-peer.test.ts).
describe.skipIf(OFF_LOOPBACK === undefined)(`the status API, asked from ${OFF_LOOPBACK}`, () => {
  const remote = OFF_LOOPBACK ?? "";

  it("answers 403 before the app, while probes and /metrics answer as ever", async () => {
    const { port, loads } = await ops();
    const answers = [];
    for (const [path, method] of [
      ["/v1/snapshot", "GET"],
      ["/v1/apps", "GET"],
      ["/v1/apps/shop", "GET"],
      ["/v1/hosts/shop.example.com", "GET"],
      ["/v1/snapshot", "HEAD"],
      ["/", "GET"],
      ["/healthz", "POST"],
      ["/healthz", "GET"],
      ["/readyz", "GET"],
    ] as const)
      answers.push(await seen(remote, port, path, method));
    const metrics = await from(remote, port, "/metrics");
    const remoteLoads = loads();
    const fromLoopback = await seen(LOOPBACK, port, "/v1/snapshot");
    expect({
      answers,
      metrics: [metrics.status, metrics.body.includes("replica_mirror_synced")],
      remoteLoads,
      fromLoopback,
      loads: loads(),
    }).toEqual({
      answers: [
        ["GET", "/v1/snapshot", 403, DENIED],
        ["GET", "/v1/apps", 403, DENIED],
        ["GET", "/v1/apps/shop", 403, DENIED],
        ["GET", "/v1/hosts/shop.example.com", 403, DENIED],
        ["HEAD", "/v1/snapshot", 403, ""],
        ["GET", "/", 403, DENIED],
        ["POST", "/healthz", 403, DENIED],
        ["GET", "/healthz", 200, "ok"],
        ["GET", "/readyz", 200, "ok"],
      ],
      metrics: [200, true],
      remoteLoads: 0,
      fromLoopback: ["GET", "/v1/snapshot", 200, 1],
      loads: 1,
    });
  });

  it("answers it with --allow-remote-status-api", async () => {
    const { port } = await ops(true);
    expect(await seen(remote, port, "/v1/snapshot")).toEqual(["GET", "/v1/snapshot", 200, 1]);
  });

  it("answers the 403 as plain text", async () => {
    const { port } = await ops();
    expect(await from(remote, port, "/v1/apps")).toEqual({ status: 403, type: TEXT, body: DENIED });
  });
});

describe("the status API, asked through a data plane that routed the request", () => {
  it("answers 403 to a loopback peer whose request carries x-mirror-app, probes as ever", async () => {
    const { port, loads } = await ops(true);
    const routed = { "x-mirror-app": "tenant-a" };
    const answers = await Promise.all(
      ["/v1/apps", "/v1/snapshot", "/healthz"].map((path) =>
        from(LOOPBACK, port, path, "GET", routed).then((r) => [path, r.status, r.body]),
      ),
    );
    expect({ answers, loads: loads() }).toEqual({
      answers: [
        ["/v1/apps", 403, ROUTED],
        ["/v1/snapshot", 403, ROUTED],
        ["/healthz", 200, "ok"],
      ],
      loads: 0,
    });
  });
});
