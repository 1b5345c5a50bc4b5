// The data plane's requests are answered straight on Node's request and response; inject(),
// debug logging and Fastify's own errors go through Fastify. Both must write the same answer.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDataServer } from "../../src/http/data-server.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { RawConnection } from "../support/raw-http.ts";
import { snapshotOf } from "../support/world.ts";

const holder = new SnapshotHolder();
const app = createDataServer({ holder, logger: false });
let port = 0;

beforeAll(async () => {
  holder.swap(
    snapshotOf(
      [
        { name: "shop", hostnames: ["shop.example.com"], upstream: "http://shop:8080" },
        { name: "blog", hostnames: ["blog.example.com"] },
        { name: "edge", hostnames: ["*.edge.example.com"], secret: "missing" },
      ],
      { "shop-credentials": { token: "s" }, "blog-credentials": { token: "b" } },
    ),
  );
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
});
afterAll(() => app.close());

// Set by Node on every answer: not part of what is compared.
const TRANSPORT = new Set(["date", "connection", "keep-alive"]);

/** Status and contract headers of one request sent over a socket (the direct path). */
async function overSocket(method: string, target: string, headers: Record<string, string>) {
  const connection = new RawConnection(port);
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
  const r = await app.inject({ method: method as "GET", url: target, headers });
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

describe("/v1/route on Node's response and through Fastify", () => {
  it.each(requests)("%s %s %j: the same status, headers and empty body", async (m, t, h) => {
    const direct = await overSocket(m, t, h);
    expect(direct).toEqual(await throughFastify(m, t, h));
    expect(direct.body).toBe("");
  });
});
