// What a proxy's push channel admits and what the pusher does about a table changed behind its
// back, through the real proxy with its shipped zero-hop configuration (ADR 46, ADR 51): no TCP
// port of the proxy takes a table, the pusher pushes through the Unix socket, and a table another
// writer changed through that socket is noticed within the deep verification interval (ADR 70),
// counted and pushed again whole. Run by each proxy's test file.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.ts";
import { caddyRoutes } from "../../src/push/caddy-routes.ts";
import { nginxTableBody } from "../../src/push/nginx-table.ts";
import { silentPushObserver } from "../../src/push/observer.ts";
import { type Pusher, startPusher } from "../../src/push/pusher.ts";
import { tableOf } from "../../src/push/table.ts";
import { ok } from "../../src/result.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { listeningPorts } from "../support/listening-ports.ts";
import { release } from "../support/release.ts";
import type { Tool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import { type AppInput, snapshotOf } from "../support/world.ts";
import { ask, type EchoUpstreams, startEchoUpstreams } from "../support/zero-hop.ts";
import type { ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { secretsFor } from "./zero-hop-world.ts";

export interface PushChannelSpec {
  /** For the suite's title. */
  readonly name: string;
  readonly binary: Tool;
  start(binary: string, dir: string): Promise<ZeroHopProxy>;
  /**
   * Gives `host` the entry it has in `forged` (same revision as the table held) through the
   * proxy's own runtime interface, as any other writer reaching that socket would.
   */
  tamper(o: {
    readonly proxy: ZeroHopProxy;
    readonly dir: string;
    readonly forged: Snapshot;
    readonly host: string;
  }): Promise<void>;
}

// Short, so the suite waits little; the shipped defaults are 5 s and 60 s. A table changed in
// place (HAProxy's `set map` of a big map) only a deep verification finds (ADR 70).
const VERIFY_MS = 400;
const DEEP_VERIFY_MS = 800;
const HOST = "shop.example.com";

/** Runs the push-channel cases through `spec`'s proxy; skipped when it is not installed. */
export function describePushChannel(spec: PushChannelSpec): void {
  const binary = spec.binary.path;
  describe.skipIf(binary === undefined)(`${spec.name}: the push channel`, () => {
    let dir: string;
    let upstreams: EchoUpstreams;
    let proxy: ZeroHopProxy;
    let pusher: Pusher;
    let pushed: Snapshot;
    const drifts: string[] = [];
    let pushes = 0;
    const world = (shopUpstream: string): AppInput[] => [
      { name: "blog", hostnames: ["blog.example.com"], upstream: upstreams.urls[0]! },
      { name: "shop", hostnames: [HOST, `*.${HOST}`], upstream: shopUpstream },
    ];
    /** Which upstream answers `HOST` (its index), or the refusal's reason. */
    const routedTo = async () => {
      const answer = await ask(proxy.port, { host: HOST });
      return answer.echoed?.upstream ?? answer.reason;
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "replica-mirror-push-channel-"));
      upstreams = await startEchoUpstreams(2);
      proxy = await spec.start(binary!, dir);
      pusher = startPusher({
        target: proxy.target,
        clock: systemClock,
        observer: {
          ...silentPushObserver,
          drifted: (e) => drifts.push(`${e.target}:${e.revision}`),
          pushed: () => {
            pushes += 1;
          },
        },
        verifyIntervalMs: VERIFY_MS,
        deepVerifyIntervalMs: DEEP_VERIFY_MS,
      });
      pushed = snapshotOf(world(upstreams.urls[0]!), secretsFor(["blog", "shop"]), 1);
      pusher.publish(pushed);
      await waitUntil(() => pusher.held() === 1, { what: `${spec.name} to hold revision 1` });
    }, 30_000);

    afterAll(() => release(pusher, proxy, upstreams, dir));

    it("listens on no TCP port but its data ports, and no write sent there changes the table", async () => {
      const ports = listeningPorts(proxy.pid());
      const forged = snapshotOf(world(upstreams.urls[1]!), secretsFor(["blog", "shop"]), 1);
      const writes = [
        { method: "PUT", path: "/replica-mirror/table", body: nginxTableBody(forged) },
        {
          method: "PATCH",
          path: "/id/replica_mirror_server/routes",
          body: JSON.stringify(caddyRoutes(tableOf(forged))),
        },
        { method: "POST", path: "/load", body: "{}" },
      ];
      // The TLS port, if any, runs the same frontend: plain HTTP writes go to the data port.
      for (const port of ports.filter((p) => p !== proxy.tlsPort)) {
        for (const host of ["127.0.0.1", "localhost", "", HOST]) {
          for (const w of writes) {
            const headers = { "content-type": "application/json" };
            await ask(port, { ...w, host, headers, body: Buffer.from(w.body) });
          }
        }
      }
      expect({
        ports,
        digest: await proxy.target.heldDigest(),
        routedTo: await routedTo(),
      }).toEqual({
        // Its TLS port too, when it terminates TLS (ADR 56): the same data server.
        ports: [proxy.port, ...(proxy.tlsPort === null ? [] : [proxy.tlsPort])].sort(
          (a, b) => a - b,
        ),
        digest: ok(proxy.target.digestOf(pushed)),
        routedTo: 0,
      });
    });

    it("notices a table changed through its socket within the deep verification interval, counts it and pushes it whole again", async () => {
      const forged = snapshotOf(world(upstreams.urls[1]!), secretsFor(["blog", "shop"]), 1);
      const before = await routedTo();
      await spec.tamper({ proxy, dir, forged, host: HOST });
      const tampered = await routedTo();
      const pushesBefore = pushes;
      const since = performance.now();
      // Routed right again once the routing map is committed; the push it belongs to has ended
      // (and the target knows what it left) only when the pusher reports it.
      await waitUntil(async () => pushes > pushesBefore && (await routedTo()) === 0, {
        timeoutMs: DEEP_VERIFY_MS + 5_000,
        intervalMs: 20,
        what: `${spec.name} to route ${HOST} from the pushed table again`,
      });
      const restoredWithin = performance.now() - since;
      expect({
        before,
        tampered,
        drifts,
        digest: await proxy.target.heldDigest(),
        inTime: restoredWithin < DEEP_VERIFY_MS + 1_000,
      }).toEqual({
        before: 0,
        tampered: 1,
        drifts: [`${proxy.target.name}:1`],
        digest: ok(proxy.target.digestOf(pushed)),
        inTime: true,
      });
    }, 30_000);
  });
}
