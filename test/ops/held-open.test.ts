// The ops listener held open (issue 42, item 5), over real sockets on 127.0.0.1: more kept-alive
// connections than its cap of 128, each idle after one answer, then connections that send half a
// request and stall. A probe's new connection still gets in and is answered at once, and the
// listener never holds more than its cap: the connections that waited longest are closed.

import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER } from "../../src/answers/route-answer.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createOpsServer, type OpsServer } from "../../src/ops/ops-server.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import { get } from "../support/http.ts";
import { RawConnection } from "../support/raw-http.ts";
import { waitUntil } from "../support/wait.ts";
import { snapshotOf } from "../support/world.ts";

/** The ops listener's cap (ops-server.ts). */
const CAP = 128;
const IDLE = 160;
const SLOW = 64;
/**
 * The kubelet's default probe timeout is 1 s, and a quiet machine answers in milliseconds; 2.5 s
 * hold on a busy one. A listener that keeps the probe out never answers it.
 */
const PROMPT_MS = 2_500;

const held: RawConnection[] = [];
const open: OpsServer[] = [];
afterEach(async () => {
  for (const c of held.splice(0)) c.destroy();
  for (const { server, closeStatusApi } of open.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await closeStatusApi();
  }
});

async function readyOps(): Promise<{ server: OpsServer["server"]; port: number }> {
  const holder = new SnapshotHolder();
  holder.swap(snapshotOf(null, {}, 1));
  const ops = createOpsServer({
    holder,
    metrics: createMetrics(),
    retryAfter: DEFAULT_RETRY_AFTER,
  });
  open.push(ops);
  await new Promise<void>((resolve) => ops.server.listen(0, "127.0.0.1", resolve));
  return { server: ops.server, port: (ops.server.address() as AddressInfo).port };
}

/** A connection that asked /healthz once and now sits idle, kept alive (or was closed). */
async function keptAlive(port: number): Promise<RawConnection> {
  const c = new RawConnection(port);
  held.push(c);
  await c.exchange(Buffer.from("GET /healthz HTTP/1.1\r\nHost: ops\r\n\r\n"), false, 2_000);
  return c;
}

/** A connection that sent half a request's headers and stalls. */
async function slowHeader(port: number): Promise<RawConnection> {
  const c = new RawConnection(port);
  held.push(c);
  await c.send("GET /readyz HTTP/1.1\r\nHost: ops\r\n").catch(() => undefined);
  return c;
}

/** A probe on a new connection: what it got, and whether in time. */
async function probe(port: number, path: string) {
  const started = performance.now();
  const answer = await get(port, path, {}, { timeoutMs: 5_000 }).then(
    (r) => ({ status: r.status, body: r.body }),
    (e: unknown) => ({ failed: String(e) }),
  );
  return { path, answer, inTime: performance.now() - started < PROMPT_MS };
}

describe("the ops listener, held open", () => {
  it("answers /healthz and /readyz at once while idle and half-sent connections hold its cap", async () => {
    const { server, port } = await readyOps();
    const idle: RawConnection[] = [];
    for (let i = 0; i < IDLE; i++) idle.push(await keptAlive(port));
    const slow: RawConnection[] = [];
    for (let i = 0; i < SLOW; i++) slow.push(await slowHeader(port));
    // Every connection past the cap closes one: these many, whichever the server chose.
    const closedCount = IDLE + SLOW - CAP;
    await waitUntil(() => [...idle, ...slow].filter((c) => c.ended).length >= closedCount, {
      timeoutMs: 5_000,
      what: `${closedCount} connections closed by the server`,
    });
    const openIdle = spans(idle.flatMap((c, i) => (c.ended ? [] : [i])));
    const openSlow = slow.filter((c) => !c.ended).length;
    const heldBefore = await connections(server);

    const probes = [await probe(port, "/healthz"), await probe(port, "/readyz")];
    const heldAfter = await connections(server);

    expect({ openIdle, openSlow, heldBefore, probes, heldAtMostCap: heldAfter <= CAP }).toEqual({
      // The idle connections that waited longest gave way, oldest first.
      openIdle: [`${IDLE - (CAP - SLOW)}-${IDLE - 1}`],
      openSlow: SLOW,
      heldBefore: CAP,
      probes: [
        { path: "/healthz", answer: { status: 200, body: "ok" }, inTime: true },
        { path: "/readyz", answer: { status: 200, body: "ok" }, inTime: true },
      ],
      heldAtMostCap: true,
    });
  }, 30_000);
});

/** Ascending indexes as runs: [0, 1, 2, 5] is ["0-2", "5-5"]. */
function spans(indexes: readonly number[]): string[] {
  const runs: [number, number][] = [];
  for (const i of indexes) {
    const last = runs.at(-1);
    if (last !== undefined && last[1] === i - 1) last[1] = i;
    else runs.push([i, i]);
  }
  return runs.map(([a, b]) => `${a}-${b}`);
}

/** The connections `server` holds. */
function connections(server: OpsServer["server"]): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((e, n) => (e ? reject(e) : resolve(n))),
  );
}
