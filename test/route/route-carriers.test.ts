// The data plane's requests are answered by the data thread, straight on Node's request and
// response, from its view of the Snapshot; everything else it forwards to the Fastify app, which
// inject() also reaches (ADR 27). Over a socket and through inject() must give the same answer.

import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDataThread, type TestDataThread } from "../support/data-thread.ts";
import { RawConnection } from "../support/raw-http.ts";
import { snapshotOf } from "../support/world.ts";

let served: TestDataThread;
let port = 0;
/** The same Fastify app the thread forwards to, on a socket of its own. */
let appPort = 0;

beforeAll(async () => {
  served = await startTestDataThread(
    snapshotOf(
      [
        { name: "shop", hostnames: ["shop.example.com"], upstream: "http://shop:8080" },
        { name: "blog", hostnames: ["blog.example.com"] },
        { name: "edge", hostnames: ["*.edge.example.com"], secret: "missing" },
      ],
      { "shop-credentials": { token: "s" }, "blog-credentials": { token: "b" } },
    ),
  );
  port = served.port;
  await served.app.listen({ host: "127.0.0.1", port: 0 });
  appPort = (served.app.server.address() as AddressInfo).port;
});
afterAll(() => served.close());

// Set by Node on every answer: not part of what is compared.
const TRANSPORT = new Set(["date", "connection", "keep-alive"]);

/** Status, headers and body of one request sent over a socket to the data thread. */
async function overSocket(
  method: string,
  target: string,
  headers: Record<string, string>,
  to = port,
) {
  const connection = new RawConnection(to);
  await connection.connected;
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  const exchange = await connection.exchange(
    Buffer.from(`${method} ${target} HTTP/1.1\r\n${lines.join("")}\r\n`),
    method === "HEAD",
  );
  connection.destroy();
  if (exchange.kind !== "answer") throw new Error(`no answer: ${exchange.kind}`);
  const { status, headers: received, body } = exchange.response;
  return {
    status,
    headers: Object.fromEntries(received.filter(([n]) => !TRANSPORT.has(n))),
    body: body.toString(),
  };
}

/** The same request through Fastify (inject). */
async function throughFastify(method: string, target: string, headers: Record<string, string>) {
  const r = await served.app.inject({ method: method as "GET", url: target, headers });
  const kept = Object.entries(r.headers).filter(([n]) => !TRANSPORT.has(n));
  return {
    status: r.statusCode,
    headers: Object.fromEntries(kept.map(([n, v]) => [n, String(v)])),
    body: r.body,
  };
}

const requests: [string, string, Record<string, string>][] = [
  ["GET", "/v1/route", { host: "shop.example.com" }],
  ["HEAD", "/v1/route", { host: "shop.example.com" }],
  ["POST", "/v1/route/any/path?q=1", { host: "blog.example.com", "content-length": "0" }],
  ["GET", "/v1/route", { host: "x.edge.example.com" }],
  ["GET", "/v1/route", { host: "nope.example.com" }],
  ["GET", "/v1/route", { host: "[::1]" }],
  ["GET", "/v1/route", { host: "sidecar", "x-forwarded-host": "SHOP.example.com:443, other" }],
  ["DELETE", "/v1/route", { host: "shop.example.com" }],
];

// Forwarded by the data thread: the lookup and status API, unknown paths, other methods.
const forwarded: [string, string, Record<string, string>][] = [
  ["GET", "/v1/apps", { host: "sidecar" }],
  ["GET", "/v1/apps/shop", { host: "sidecar" }],
  ["HEAD", "/v1/apps/shop", { host: "sidecar" }],
  ["GET", "/v1/apps/nope", { host: "sidecar" }],
  ["GET", "/v1/hosts/x.edge.example.com?verbose=1", { host: "sidecar" }],
  ["GET", "/v1/hosts/%zz", { host: "sidecar" }],
  ["GET", "/v1/snapshot", { host: "sidecar", "x-forwarded-host": "a, b" }],
  ["POST", "/v1/apps", { host: "sidecar", "content-length": "0" }],
  ["PROPFIND", "/v1/snapshot", { host: "sidecar" }],
  ["GET", "/nope", {}],
];

// Targets inject() would not pass on as written (its URL parser turns `\` into `/`, resolves dot
// segments, and throws on `/\%nB`): the thread forwards them as they came.
const asWritten: [string, string, Record<string, string>][] = [
  ["GET", "/\\%nB", { host: "sidecar" }],
  ["GET", "/v1\\apps", { host: "sidecar" }],
  ["GET", "/nope/../v1/apps", { host: "sidecar" }],
  ["GET", "/nope/%2e%2e/v1/snapshot", { host: "sidecar" }],
  ["GET", "/v1/hosts/../apps/shop", { host: "sidecar" }],
  ["GET", "//v1/apps", { host: "sidecar" }],
];

describe("/v1/route on the data thread and through Fastify", () => {
  it.each(requests)("%s %s %j: the same status, headers and empty body", async (m, t, h) => {
    const direct = await overSocket(m, t, h);
    expect(direct).toEqual(await throughFastify(m, t, h));
    expect(direct.body).toBe("");
  });
});

describe("requests the data thread forwards", () => {
  it.each(forwarded)("%s %s %j: the same status, headers and body", async (m, t, h) => {
    expect(await overSocket(m, t, h)).toEqual(await throughFastify(m, t, h));
  });
});

describe("targets forwarded as written", () => {
  it.each(asWritten)(
    "%s %s %j: what the Fastify app answers over its own socket",
    async (m, t, h) => {
      expect(await overSocket(m, t, h)).toEqual(await overSocket(m, t, h, appPort));
    },
  );
});
