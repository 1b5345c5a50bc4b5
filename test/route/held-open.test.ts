// The data listener's limits on a real socket (src/route/listener-limits.ts): connections past the
// cap are closed on accept, a request whose headers never finish is answered 408 and closed (on
// loopback too), and an idle kept-alive connection is closed only when an idle timeout is set.

import { afterEach, describe, expect, it } from "vitest";
import type { DataThread } from "../../src/route/data-thread.ts";
import { type ListenerLimits, LOOPBACK_LIMITS } from "../../src/route/listener-limits.ts";
import { launchDataThread, startTestDataThread } from "../support/data-thread.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { header, RawConnection } from "../support/raw-http.ts";
import { waitUntil } from "../support/wait.ts";
import { snapshotOf } from "../support/world.ts";

const SHOP = snapshotOf(
  [{ name: "shop", hostnames: ["shop.example.com"] }],
  { "shop-credentials": { token: "t" } },
  1,
);
const ROUTE = "GET /v1/route HTTP/1.1\r\nHost: shop.example.com\r\n\r\n";

const running: { thread: DataThread; open: RawConnection[] }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    for (const c of r.open) c.destroy();
    await r.thread.close(0);
  }
});

/** A data thread serving SHOP with `limits` over the loopback defaults; its log and port. */
async function start(limits: Partial<ListenerLimits>) {
  const { logger, lines } = memoryLogger("warn");
  const { thread, port } = await startTestDataThread(SHOP, logger, {
    limits: { ...LOOPBACK_LIMITS, ...limits },
  });
  const open: RawConnection[] = [];
  running.push({ thread, open });
  const connect = () => {
    const c = new RawConnection(port);
    open.push(c);
    return c;
  };
  return { connect, logLines: () => lines().map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** The status of the answer to one route request on `c`, or how the exchange ended. */
async function route(c: RawConnection): Promise<number | string> {
  const e = await c.exchange(Buffer.from(ROUTE), false, 2_000);
  return e.kind === "answer" ? e.response.status : e.kind;
}

/** Milliseconds until `c` is closed by the server, measured from now. */
async function closedAfter(c: RawConnection): Promise<number> {
  const t0 = performance.now();
  await c.closed;
  return performance.now() - t0;
}

describe("the data listener's limits", () => {
  it("closes connections past the cap as they are accepted, logs it, and serves again below it", async () => {
    const served = await start({ maxConnections: 4 });
    const held = Array.from({ length: 4 }, () => served.connect());
    expect(await Promise.all(held.map(route))).toEqual([200, 200, 200, 200]);
    const refused = served.connect();
    expect(await route(refused)).toBe("closed");
    await waitUntil(() => served.logLines().length > 0, { what: "the warning" });
    expect(served.logLines().map((l) => [l.level, l.msg, l.connections, l.maxConnections])).toEqual(
      [[40, "data listener closed connections past its cap", 1, 4]],
    );
    held[0]!.destroy();
    await held[0]!.closed;
    await waitUntil(async () => (await route(served.connect())) === 200, {
      what: "a connection below the cap to be served",
    });
  });

  it("answers 408 and closes a connection whose headers do not arrive in time, on loopback too", async () => {
    const served = await start({ headersTimeoutMs: 600, checkIntervalMs: 100 });
    const silent = served.connect();
    const slow = served.connect();
    await slow.send("GET /v1/route HTTP/1.1\r\nHost: shop.example.com\r\n");
    const [silentAnswer, slowAnswer] = await Promise.all([silent.next(), slow.next()]);
    const status = (e: typeof silentAnswer) => (e.kind === "answer" ? e.response.status : e.kind);
    expect([status(silentAnswer), status(slowAnswer), silent.ended, slow.ended]).toEqual([
      408,
      408,
      true,
      true,
    ]);
  });

  it("keeps an idle kept-alive connection open on loopback, and closes one after the idle timeout when set", async () => {
    const loopback = await start({ headersTimeoutMs: 300, checkIntervalMs: 100 });
    const kept = loopback.connect();
    expect(await route(kept)).toBe(200);
    await new Promise((r) => setTimeout(r, 1_500));
    const keptStatus = await route(kept);

    const remote = await start({ idleTimeoutMs: 1_000 });
    const idle = remote.connect();
    const e = await idle.exchange(Buffer.from(ROUTE), false);
    const keepAlive = e.kind === "answer" ? header(e.response, "keep-alive") : e.kind;
    // Node keeps the socket one second past the timeout it announces, so the client closes first.
    const closedMs = await closedAfter(idle);
    expect({
      keptStatus,
      keepAlive,
      closedInTime: closedMs > 900 && closedMs < 3_000,
    }).toEqual({ keptStatus: 200, keepAlive: "timeout=1", closedInTime: true });
  });

  it("warns when it is not on loopback (an address nothing here can take: it logs, then fails)", async () => {
    const { logger, lines } = memoryLogger("warn");
    const { thread } = launchDataThread(logger, {
      // TEST-NET-1: no interface of this machine has it, so the listen fails and nothing opens.
      listen: { host: "192.0.2.1", port: 0 },
    });
    const listening = await thread.listening;
    await thread.close(0);
    expect({
      listening,
      log: lines().map((l) => {
        const { level, msg, listen, idleTimeoutMs } = JSON.parse(l) as Record<string, unknown>;
        return { level, msg, listen, idleTimeoutMs };
      }),
    }).toEqual({
      listening: { ok: false, error: expect.stringContaining("EADDRNOTAVAIL") },
      log: [
        {
          level: 40,
          msg: "the data listener is not on loopback: anyone who reaches it can read App names and upstreams",
          listen: { host: "192.0.2.1", port: 0 },
          idleTimeoutMs: 30_000,
        },
      ],
    });
  });
});
