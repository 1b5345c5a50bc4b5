// Through a real socket, on the data thread as the sidecar runs it (ADR 27): what inject() cannot
// show (raw header lines, Node's parser, streaming).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDataThread, type TestDataThread } from "../support/data-thread.ts";
import { header, RawConnection, type RawResponse } from "../support/raw-http.ts";
import { snapshotOf } from "../support/world.ts";

let served: TestDataThread;
let port: number;

beforeAll(async () => {
  served = await startTestDataThread(
    snapshotOf(
      [{ name: "shop", hostnames: ["shop.example.com"] }],
      { "shop-credentials": { token: "t" } },
      3,
    ),
  );
  port = served.port;
});

afterAll(() => served.close());

const get = (host: string) => `GET /v1/route HTTP/1.1\r\nHost: ${host}\r\n\r\n`;

/** The next answer on `c`; fails the test when there is none. */
async function answer(c: RawConnection): Promise<RawResponse> {
  const e = await c.next();
  if (e.kind !== "answer") throw new Error(`no answer: ${e.kind}`);
  return e.response;
}

describe("the data listener on a real socket", () => {
  it("answers two Host lines with 400 bad-host and keeps serving the connection", async () => {
    const c = new RawConnection(port);
    await c.send(
      "GET /v1/route HTTP/1.1\r\nHost: shop.example.com\r\nHost: other.example.com\r\n\r\n",
    );
    const refused = await answer(c);
    expect([refused.status, header(refused, "x-mirror-reason")]).toEqual([400, "bad-host"]);
    await c.send(get("shop.example.com"));
    const routed = await answer(c);
    expect([routed.status, header(routed, "x-mirror-app")]).toEqual([200, "shop"]);
    c.destroy();
  });

  it.each([
    ["HTTP/1.1", "GET /v1/route HTTP/1.1\r\n\r\n"],
    ["HTTP/1.0", "GET /v1/route HTTP/1.0\r\n\r\n"],
  ])("answers an %s request without Host with 400 bad-host", async (_v, request) => {
    const c = new RawConnection(port);
    await c.send(request);
    const r = await answer(c);
    expect([r.status, header(r, "x-mirror-reason")]).toEqual([400, "bad-host"]);
    c.destroy();
  });

  it("answers a chunked upload before its end, then discards the rest", async () => {
    const c = new RawConnection(port);
    await c.send(
      "POST /v1/route HTTP/1.1\r\nHost: shop.example.com\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    const chunk = Buffer.concat([
      Buffer.from(`${(64 * 1024).toString(16)}\r\n`),
      Buffer.alloc(64 * 1024, 0x61),
      Buffer.from("\r\n"),
    ]);
    await c.send(chunk);
    // The body is still open: the answer arrives anyway.
    const r = await answer(c);
    expect([r.status, header(r, "x-mirror-app")]).toEqual([200, "shop"]);
    // 16 MiB more, then the end: Node reads and drops it, and the connection stays usable.
    for (let i = 0; i < 256; i++) await c.send(chunk);
    await c.send("0\r\n\r\n");
    await c.send(get("shop.example.com"));
    expect((await answer(c)).status).toBe(200);
    c.destroy();
  });

  it("answers a POST announcing 1 GiB after its first bytes", async () => {
    const c = new RawConnection(port);
    await c.send(
      `POST /v1/route/check HTTP/1.1\r\nHost: shop.example.com\r\nContent-Length: ${2 ** 30}\r\n\r\nabc`,
    );
    const r = await answer(c);
    expect([r.status, header(r, "x-mirror-app")]).toEqual([200, "shop"]);
    c.destroy();
  });

  it("refuses headers beyond Node's 16 KiB limit with 431 and keeps listening", async () => {
    const c = new RawConnection(port);
    await c.send(get("a".repeat(20_000)));
    expect((await answer(c)).status).toBe(431);
    await c.closed;
    const next = new RawConnection(port);
    await next.send(get("shop.example.com"));
    expect((await answer(next)).status).toBe(200);
    next.destroy();
  });
});
