// nginx zero-hop's C module (ADR 86) against the Lua it replaced: the same table pushed to both
// (a whole one, then a PATCH), the same raw requests sent to each, and every answer the same byte
// for byte but its Date. The table holds what the sidecar never writes too (a D entry to an IP, a
// peer that is no address), so that each branch of route() and balance() is reached.

import { mkdtemp } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { release } from "../support/release.ts";
import { findTool } from "../support/tools.ts";
import { type EchoUpstreams, startEchoUpstreams } from "../support/zero-hop.ts";
import { startZeroHopNginx, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";

const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);

/** A table body as the push listener takes it, to `socket`; resolves with the status. */
const push = (socket: string, method: string, body: string) =>
  new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      { socketPath: socket, method, path: "/replica-mirror/table" },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });

/** The raw answer to `raw` on its own connection, its Date masked. */
const raw = (port: number, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1", () => socket.end(bytes));
    socket.on("data", (c) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () =>
      resolve(
        Buffer.concat(chunks)
          .toString("latin1")
          .replace(/\r\nDate: [^\r]*/, "\r\nDate: -"),
      ),
    );
  });

const HOSTS = [
  ...["i", "ic", "nc", "d", "dc", "bad", "s", "u", "o", "n", "a.b.w", "w"].map(
    (h) => `${h}.example.com`,
  ),
  "I.Example.COM.",
  "i.example.com:8080",
  "i.example.com:123456",
  "i.example.com:",
  "nope.example.com",
  "1.2.3.4",
  "shop.0x1F",
  "a..b",
  "[::1]:80",
  `${"a.".repeat(130)}com`,
  "",
];

const requests = (): string[] => [
  ...HOSTS.map(
    (h) =>
      `GET /p?q=1 HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer client\r\nConnection: close\r\n\r\n`,
  ),
  "GET /p HTTP/1.0\r\n\r\n",
  "GET /p HTTP/1.0\r\nHost: s.example.com\r\n\r\n",
  "HEAD /p HTTP/1.0\r\nHost: s.example.com\r\n\r\n",
  "HEAD /p HTTP/1.1\r\nHost: nope.example.com\r\nConnection: close\r\n\r\n",
  "GET http://d.example.com/a HTTP/1.1\r\nHost: i.example.com\r\nConnection: close\r\n\r\n",
  "GET HTTPS://IC.example.com:99/a HTTP/1.1\r\nHost: zz\r\nConnection: close\r\n\r\n",
  "GET /p HTTP/1.1\r\nX-Mirror-A: 1\r\nHost: i.example.com\r\nx-mirror-app: f\r\nConnection: close\r\n\r\n",
  "POST /p HTTP/1.1\r\nHost: nope.example.com\r\nContent-Length: 5\r\n\r\nhelloGET /p HTTP/1.1\r\nHost: dc.example.com\r\nConnection: close\r\n\r\n",
];

describe.skipIf(nginx.path === undefined)("nginx's C module against the Lua route()", () => {
  let dir: string;
  let upstreams: EchoUpstreams;
  let c: ZeroHopProxy;
  let lua: ZeroHopProxy;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-nginx-module-"));
    upstreams = await startEchoUpstreams(1);
    c = await startZeroHopNginx(nginx.path!, join(dir, "c"));
    lua = await startZeroHopNginx(nginx.path!, join(dir, "lua"), { luaRoutes: true });
  }, 60_000);

  afterAll(() => release(c, lua, upstreams, dir));

  const same = async () => {
    for (const bytes of requests()) {
      const [fromC, fromLua] = await Promise.all([raw(c.port, bytes), raw(lua.port, bytes)]);
      expect({ request: bytes, answer: fromC }).toEqual({ request: bytes, answer: fromLua });
    }
  };

  it("answers every request as the Lua did, before the first push, after a whole table and after a PATCH", async () => {
    await same();
    const up = new URL(upstreams.urls[0]!);
    const [ip, port] = [up.hostname, up.port];
    const whole = [
      "revision 7",
      `= i.example.com I|iapp|${ip}|${port}||http://${ip}:${port}/i`,
      `= ic.example.com I|icapp|${ip}|${port}|c|http://${ip}:${port}/ic`,
      `= nc.example.com I|ncapp|${ip}|${port}|c|http://x`,
      `= d.example.com D|dapp|${ip}|${port}||http://${ip}:${port}/d`,
      `= dc.example.com D|dcapp|${ip}|${port}|c|http://${ip}:${port}/dc`,
      `= bad.example.com I|badapp|999.1.1.1|${port}||http://x`,
      "= s.example.com S|sapp",
      "= u.example.com U|uapp",
      "= o.example.com O|oapp",
      "= n.example.com N|napp",
      `* w.example.com I|wapp|${ip}|${port}||http://${ip}:${port}/w`,
      "c dcapp Bearer dc-test",
      "c icapp Basic ic|with spaces",
    ];
    for (const p of [c, lua])
      expect(await push(p.socket, "PUT", `${whole.join("\n")}\n`)).toBe(200);
    await same();
    const patch = [
      "revision 8",
      "base 1",
      `= i.example.com I|iapp2|${ip}|${port}||http://${ip}:${port}/i2`,
      "= s.example.com O|sapp",
      "* w.example.com U|wapp",
      "c icapp Bearer rotated",
      "c dcapp ",
    ];
    for (const p of [c, lua])
      expect(await push(p.socket, "PATCH", `${patch.join("\n")}\n`)).toBe(204);
    await same();
  }, 60_000);
});
