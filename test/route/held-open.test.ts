// The data listener's limits on a real socket (src/route/listener-limits.ts): at the cap a new
// connection closes the longest-idle one (src/route/connection-cap.ts), a request whose headers
// never finish is answered 408 and closed (on loopback too), and an idle kept-alive connection is
// closed only when an idle timeout is set.

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
/** A route request in two parts: the first leaves the connection in the middle of a request. */
const PARTIAL = "GET /v1/route HTTP/1.1\r\nHost: shop";
const REST = ".example.com\r\n\r\n";

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

/** The indexes of `conns` the server closed, once at least `count` of them are. */
async function closedOf(conns: readonly RawConnection[], count = 1): Promise<number[]> {
  const closed = () => conns.flatMap((c, i) => (c.ended ? [i] : []));
  await waitUntil(() => closed().length >= count, { what: `${count} connections to close` });
  return closed();
}

/** The data thread's warnings about connections closed at the cap, once there is one. */
async function evictionLog(served: Awaited<ReturnType<typeof start>>) {
  await waitUntil(() => served.logLines().length > 0, { what: "the warning" });
  return served.logLines().map((l) => [l.level, l.msg, l.idle, l.midRequest, l.maxConnections]);
}

/** Milliseconds until `c` is closed by the server, measured from now. */
async function closedAfter(c: RawConnection): Promise<number> {
  const t0 = performance.now();
  await c.closed;
  return performance.now() - t0;
}

describe("the data listener's limits", () => {
  it("at the cap, lets a new connection in by closing the longest-idle one, and logs it", async () => {
    const served = await start({ maxConnections: 4 });
    const held = Array.from({ length: 4 }, () => served.connect());
    const first: (number | string)[] = [];
    for (const c of held) first.push(await route(c));
    // The first is used again: the second is now idle the longest.
    const again = await route(held[0]!);
    const newcomer = await route(served.connect());
    expect({
      first,
      again,
      newcomer,
      closed: await closedOf(held),
      rest: await Promise.all([held[0]!, held[2]!, held[3]!].map(route)),
      log: await evictionLog(served),
    }).toEqual({
      first: [200, 200, 200, 200],
      again: 200,
      newcomer: 200,
      closed: [1],
      rest: [200, 200, 200],
      log: [[40, "data listener at its cap closed connections to let new ones in", 1, 0, 4]],
    });
  });

  it("at the cap, keeps a connection in the middle of a request and closes one silent since its accept", async () => {
    const served = await start({ maxConnections: 3 });
    const slow = served.connect();
    await slow.send(PARTIAL);
    const silent = served.connect();
    await silent.connected;
    const used = served.connect();
    // Once answered, the server has read everything sent before it on the others.
    const usedStatus = await route(used);
    const newcomer = await route(served.connect());
    const closed = await closedOf([slow, silent, used]);
    await slow.send(REST);
    const slowAnswer = await slow.next();
    expect({
      usedStatus,
      newcomer,
      closed,
      slow: slowAnswer.kind === "answer" ? slowAnswer.response.status : slowAnswer.kind,
      used: await route(used),
    }).toEqual({ usedStatus: 200, newcomer: 200, closed: [1], slow: 200, used: 200 });
  });

  it("at the cap with every connection in the middle of a request, closes the one found so the earliest", async () => {
    const served = await start({ maxConnections: 2 });
    const [first, second] = [served.connect(), served.connect()];
    await first!.send(PARTIAL);
    await second!.send(PARTIAL);
    await new Promise((r) => setTimeout(r, 200));
    // Found in the middle of their requests in this order: `first` goes.
    const third = served.connect();
    const thirdStatus = await route(third);
    const afterThird = await closedOf([first!, second!]);
    // `third` begins a request: when `fourth` arrives nothing is idle, and `second` was found first.
    await third.send(PARTIAL);
    await new Promise((r) => setTimeout(r, 200));
    const fourth = await route(served.connect());
    const afterFourth = await closedOf([first!, second!, third], 2);
    await third.send(REST);
    const thirdAnswer = await third.next();
    expect({
      thirdStatus,
      afterThird,
      fourth,
      afterFourth,
      third: thirdAnswer.kind === "answer" ? thirdAnswer.response.status : thirdAnswer.kind,
      log: await evictionLog(served),
    }).toEqual({
      thirdStatus: 200,
      afterThird: [0],
      fourth: 200,
      afterFourth: [0, 1],
      third: 200,
      // The first eviction is reported at once, the next ones after a window.
      log: [[40, "data listener at its cap closed connections to let new ones in", 0, 1, 2]],
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
    // Node keeps the socket one second past the timeout it announces, so the client closes first:
    // 2 s quiet, under 4.5 s busy, and 6 s with Node's default 5 s keep-alive instead.
    const closedMs = await closedAfter(idle);
    expect({
      keptStatus,
      keepAlive,
      closedInTime: closedMs > 900 && closedMs < 4_500,
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
