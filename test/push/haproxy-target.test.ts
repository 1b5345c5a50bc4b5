import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";

// A stand-in for HAProxy's runtime API: each connection gets the next answer, then is closed.
describe("the HAProxy target's verification", () => {
  let dir: string;
  let server: net.Server;
  const answers: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-haproxy-target-"));
    server = net.createServer((c) => c.once("data", () => c.end(answers.shift() ?? "")));
    await new Promise<void>((r) => server.listen(join(dir, "haproxy.sock"), r));
  });

  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  it("never puts a line of the map in its failure, where an App's credential may be", async () => {
    const target = haproxyTarget({
      socket: join(dir, "haproxy.sock"),
      map: "/m.map",
      credentialsMap: "/c.map",
    });
    // Each deep verification reads the routing map, the credentials map, then their overlays.
    const overlays = ["0x55d0c0a00009 REVISION 3\n", ""];
    answers.push(
      "0x55d0c0a00001 vault.example.com I|vault|10.0.0.1|80|c2VjcmV0|3\n0x55d0c0a00002 odd key value\n",
      "",
      ...overlays,
      "Unknown map identifier. Please use #<id> or <file>.\n",
      "",
      ...overlays,
    );
    const deep = { deep: true };
    expect([await target.heldDigest(deep), await target.heldDigest(deep)]).toEqual([
      {
        ok: false,
        error: {
          reason: "protocol",
          message: "'show map /m.map': a line is not an entry of a map",
        },
      },
      {
        ok: false,
        error: {
          reason: "rejected",
          message: "'show map /m.map': Unknown map identifier. Please use #<id> or <file>.",
        },
      },
    ]);
  });
});
