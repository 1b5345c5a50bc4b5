// `serve` as a process when its data listener breaks, through the data thread's test hooks
// (test/support/hooked-data-worker.ts): a runtime error of the listening socket ends the process
// with status 1 and a clear line; a data thread whose event loop is blocked turns /healthz 503,
// and a SIGTERM then still ends the process once the close deadline passed.

import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { demoServe } from "../support/demo-serve.ts";
import { get, untilReady } from "../support/http.ts";
import { type Command, listeningPorts, startCommand } from "../support/process.ts";
import { waitUntil } from "../support/wait.ts";

const HOOKED = fileURLToPath(new URL("../support/serve-hooked.ts", import.meta.url));

const { serveArgs } = demoServe();

const env = { ...process.env, REPLICA_MIRROR_LOG_LEVEL: "info" };

/** The log lines of `c` at `level` or above, as [level, msg, err]. */
const severe = (c: Command, level: number) =>
  c
    .logLines()
    .filter((l) => (l.level as number) >= level)
    .map((l) => [l.level, l.msg, l.err]);

describe("serve with a broken data listener", () => {
  it("exits 1 with a clear line when the listening socket fails at run time (accept EMFILE)", async () => {
    const c = startCommand(process.execPath, [HOOKED, ...serveArgs()], { env, ipc: true });
    try {
      const { data, ops } = await listeningPorts(c);
      await untilReady(ops, { intervalMs: 20 });
      const routed = (await get(data, "/v1/route", { host: "shop.example.com" })).status;
      c.child.send({ listenerError: ["EMFILE", "accept"] });
      const exit = await Promise.race([
        c.exit,
        new Promise((r) => setTimeout(() => r("still running"), 10_000)),
      ]);
      expect({ routed, exit, severe: severe(c, 50) }).toEqual({
        routed: 200,
        exit: { code: 1, signal: null },
        severe: [
          [60, "data listener lost", "the data thread failed: data listener error: accept EMFILE"],
        ],
      });
    } finally {
      c.child.kill("SIGKILL");
    }
  }, 40_000);

  it("turns /healthz 503 when the data thread stops turning, and SIGTERM still ends the process", async () => {
    const c = startCommand(process.execPath, [HOOKED, ...serveArgs()], { env, ipc: true });
    try {
      const { ops } = await listeningPorts(c);
      await untilReady(ops, { intervalMs: 20 });
      const before = (await get(ops, "/healthz")).status;
      c.child.send({ freezeMs: 60_000 });
      await waitUntil(async () => (await get(ops, "/healthz")).status === 503, {
        timeoutMs: 12_000,
        intervalMs: 200,
        what: "/healthz to answer 503",
      });
      const t0 = performance.now();
      c.child.kill("SIGTERM");
      const exit = await Promise.race([
        c.exit,
        new Promise((r) => setTimeout(() => r("still running"), 15_000)),
      ]);
      const ms = performance.now() - t0;
      expect({ before, exit, inTime: ms < 8_000, severe: severe(c, 50) }).toEqual({
        before: 200,
        exit: { code: 1, signal: null },
        inTime: true,
        severe: [[50, "the sidecar did not close in time: exiting", undefined]],
      });
    } finally {
      c.child.kill("SIGKILL");
    }
  }, 60_000);
});
