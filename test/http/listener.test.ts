// Through a real socket: what inject() cannot show (raw header lines, Node's parser, streaming).

import net, { type AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDataServer } from "../../src/http/data-server.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { snapshotOf } from "../support/world.ts";

/** A raw HTTP/1.1 connection: write bytes, read one answer's head, see when the server closes. */
class Connection {
  readonly #socket: net.Socket;
  #received = "";
  #waiters: (() => void)[] = [];
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.#socket = net.connect(port, "127.0.0.1");
    this.#socket.setEncoding("latin1");
    this.#socket.on("data", (d: string) => {
      this.#received += d;
      for (const w of this.#waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => this.#socket.on("close", () => resolve()));
    this.#socket.on("error", () => {});
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.#socket.write(data, (e) => (e ? reject(e) : resolve())),
    );
  }

  /** The next answer's status line and headers (lower-cased names), consumed from the stream. */
  async head(): Promise<{ status: number; headers: Record<string, string> }> {
    while (!this.#received.includes("\r\n\r\n")) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    const end = this.#received.indexOf("\r\n\r\n");
    const [statusLine, ...lines] = this.#received.slice(0, end).split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers["content-length"] ?? 0);
    this.#received = this.#received.slice(end + 4 + length);
    return { status: Number(statusLine!.split(" ")[1]), headers };
  }

  destroy(): void {
    this.#socket.destroy();
  }
}

let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  const holder = new SnapshotHolder();
  holder.swap(
    snapshotOf(
      [{ name: "shop", hostnames: ["shop.example.com"] }],
      { "shop-credentials": { token: "t" } },
      3,
    ),
  );
  app = createDataServer({ holder, logger: false });
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as AddressInfo).port;
});

afterAll(() => app.close());

const get = (host: string) => `GET /v1/route HTTP/1.1\r\nHost: ${host}\r\n\r\n`;

describe("the data listener on a real socket", () => {
  it("answers two Host lines with 400 bad-host and keeps serving the connection", async () => {
    const c = new Connection(port);
    await c.write(
      "GET /v1/route HTTP/1.1\r\nHost: shop.example.com\r\nHost: other.example.com\r\n\r\n",
    );
    const refused = await c.head();
    expect([refused.status, refused.headers["x-mirror-reason"]]).toEqual([400, "bad-host"]);
    await c.write(get("shop.example.com"));
    const routed = await c.head();
    expect([routed.status, routed.headers["x-mirror-app"]]).toEqual([200, "shop"]);
    c.destroy();
  });

  it.each([
    ["HTTP/1.1", "GET /v1/route HTTP/1.1\r\n\r\n"],
    ["HTTP/1.0", "GET /v1/route HTTP/1.0\r\n\r\n"],
  ])("answers an %s request without Host with 400 bad-host", async (_v, request) => {
    const c = new Connection(port);
    await c.write(request);
    const r = await c.head();
    expect([r.status, r.headers["x-mirror-reason"]]).toEqual([400, "bad-host"]);
    c.destroy();
  });

  it("answers a chunked upload before its end, then discards the rest", async () => {
    const c = new Connection(port);
    await c.write(
      "POST /v1/route HTTP/1.1\r\nHost: shop.example.com\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    const chunk = Buffer.concat([
      Buffer.from(`${(64 * 1024).toString(16)}\r\n`),
      Buffer.alloc(64 * 1024, 0x61),
      Buffer.from("\r\n"),
    ]);
    await c.write(chunk);
    // The body is still open: the answer arrives anyway.
    const r = await c.head();
    expect([r.status, r.headers["x-mirror-app"]]).toEqual([200, "shop"]);
    // 16 MiB more, then the end: Node reads and drops it, and the connection stays usable.
    for (let i = 0; i < 256; i++) await c.write(chunk);
    await c.write("0\r\n\r\n");
    await c.write(get("shop.example.com"));
    expect((await c.head()).status).toBe(200);
    c.destroy();
  });

  it("answers a POST announcing 1 GiB after its first bytes", async () => {
    const c = new Connection(port);
    await c.write(
      `POST /v1/route/check HTTP/1.1\r\nHost: shop.example.com\r\nContent-Length: ${2 ** 30}\r\n\r\nabc`,
    );
    const r = await c.head();
    expect([r.status, r.headers["x-mirror-app"]]).toEqual([200, "shop"]);
    c.destroy();
  });

  it("refuses headers beyond Node's 16 KiB limit with 431 and keeps listening", async () => {
    const c = new Connection(port);
    await c.write(get("a".repeat(20_000)));
    expect((await c.head()).status).toBe(431);
    await c.closed;
    const next = new Connection(port);
    await next.write(get("shop.example.com"));
    expect((await next.head()).status).toBe(200);
    next.destroy();
  });
});
