import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeCommand } from "../../src/push/haproxy-runtime.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import { tableOf } from "../../src/push/table.ts";
import { entryFields } from "../../src/push/table-lines.ts";
import { ok } from "../../src/result.ts";
import { findTool } from "../support/tools.ts";
import { snapshotOf } from "../support/world.ts";
import { ask, TEXT_ANSWERS } from "../support/zero-hop.ts";
import { startZeroHopHaproxy, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { describePushChannel } from "./push-channel-suite.ts";
import { describeZeroHop } from "./zero-hop-suite.ts";

const haproxy = findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]);

describeZeroHop({
  name: "HAProxy runtime-API map",
  binary: haproxy,
  start: startZeroHopHaproxy,
  // The hop configuration's answers and headers (manifests/data-planes/haproxy/haproxy.cfg).
  answers: TEXT_ANSWERS,
  upstreamHeaders: ["x-mirror-app", "x-mirror-revision"],
  // Secret changes go entry by entry onto the map HAProxy holds (ADR 58): several in a row.
  changeSteps: 4,
});

describePushChannel({
  name: "HAProxy runtime API",
  binary: haproxy,
  start: startZeroHopHaproxy,
  // `set map` changes the current version's entry in place: no new version, the same revision.
  async tamper({ proxy, dir, forged, host }) {
    const value = entryFields(tableOf(forged).exact.get(host)!);
    const map = join(dir, "replica-mirror.map");
    expect(await runtimeCommand(proxy.socket, `set map ${map} ${host} ${value}`, 2_000)).toEqual(
      ok(""),
    );
  },
});

// Skipped only where the proxy binary is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(haproxy.path === undefined)("the HAProxy push target", () => {
  let dir: string;
  let proxy: ZeroHopProxy;
  const many = Array.from({ length: 1_000 }, (_, i) => ({
    name: `app-${i}`,
    hostnames: [`app-${i}.example.com`],
  }));
  const first = snapshotOf(many, {}, 1);
  const second = snapshotOf(many.slice(1), {}, 2);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
    proxy = await startZeroHopHaproxy(haproxy.path!, dir);
  }, 30_000);

  afterAll(async () => {
    await proxy?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("leaves the table whole when a push fails half-way", async () => {
    expect(await proxy.target.push(first)).toEqual({ ok: true, value: undefined });
    // One payload larger than HAProxy's buffer: HAProxy drops the connection before the commit.
    const oversized = haproxyTarget({
      socket: proxy.socket,
      map: join(dir, "replica-mirror.map"),
      credentialsMap: join(dir, "replica-mirror-credentials.map"),
      payloadBytes: 1 << 20,
    });
    const failed = await oversized.push(second);
    expect({ failed: failed.ok, held: await proxy.target.held() }).toEqual({
      failed: false,
      held: { ok: true, value: 1 },
    });
    expect(await ask(proxy.port, { host: "app-0.example.com" })).toEqual({
      ...TEXT_ANSWERS.secretUnavailable,
      app: "app-0",
    });
  });

  it("says why it could not push: no socket, or a map HAProxy does not know", async () => {
    const noSocket = haproxyTarget({
      socket: join(dir, "push", "none.sock"),
      map: join(dir, "replica-mirror.map"),
      credentialsMap: join(dir, "replica-mirror-credentials.map"),
    });
    const noMap = haproxyTarget({
      socket: proxy.socket,
      map: join(dir, "other.map"),
      credentialsMap: join(dir, "replica-mirror-credentials.map"),
    });
    const reasons = [
      await noSocket.push(first),
      await noSocket.held(),
      await noMap.push(first),
      await noMap.held(),
    ].map((r) => (r.ok ? "ok" : r.error.reason));
    expect(reasons).toEqual(["unreachable", "unreachable", "rejected", "rejected"]);
  });
});
