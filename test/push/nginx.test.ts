import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.ts";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import { silentPushObserver } from "../../src/push/observer.ts";
import { type Pusher, startPusher } from "../../src/push/pusher.ts";
import { ok } from "../../src/result.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { findTool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import {
  ask,
  credentialDigest,
  type EchoUpstreams,
  NGINX_ANSWERS,
  startEchoUpstreams,
} from "../support/zero-hop.ts";
import {
  nginxRefusesHost,
  startZeroHopNginx,
  type ZeroHopProxy,
} from "../support/zero-hop-proxies.ts";
import { type SocketRelay, startSocketRelay } from "../support/zero-hop-relay.ts";
import { describePushChannel } from "./push-channel-suite.ts";
import { describeZeroHop } from "./zero-hop-suite.ts";

const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);

describeZeroHop({
  name: "nginx Lua shared dict",
  binary: nginx,
  start: startZeroHopNginx,
  answers: NGINX_ANSWERS,
  parserRefuses: nginxRefusesHost,
});

// The fallback without the C module (module/BUILDING.md): the same contract through Lua's phases.
describeZeroHop({
  name: "nginx Lua shared dict, routed in Lua",
  binary: nginx,
  start: (binary, dir) => startZeroHopNginx(binary, dir, { luaRoutes: true }),
  answers: NGINX_ANSWERS,
  parserRefuses: nginxRefusesHost,
});

describePushChannel({
  name: "nginx push listener",
  binary: nginx,
  start: startZeroHopNginx,
  // A PUT of a whole table under the same revision, from another client of the socket.
  async tamper({ proxy, forged }) {
    expect(await nginxTarget({ socket: proxy.socket }).push(forged)).toEqual(ok(undefined));
  },
});

// Skipped only where nginx is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(nginx.path === undefined)("a credential rotation through nginx", () => {
  let dir: string;
  let upstreams: EchoUpstreams;
  let proxy: ZeroHopProxy;
  let relay: SocketRelay;
  let pusher: Pusher;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
    upstreams = await startEchoUpstreams(1);
    proxy = await startZeroHopNginx(nginx.path!, dir);
    relay = await startSocketRelay(join(dir, "relay.sock"), proxy.socket);
    const target = nginxTarget({ socket: join(dir, "relay.sock") });
    pusher = startPusher({ target, clock: systemClock, observer: silentPushObserver });
  }, 30_000);

  afterAll(async () => {
    await pusher?.close();
    await relay?.close();
    await proxy?.stop();
    await upstreams?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("goes as one PATCH of the rotated App's lines, not the whole table", async () => {
    const apps = Array.from({ length: 200 }, (_, i) => ({
      name: `app-${String(i).padStart(3, "0")}`,
      hostnames: [`app-${i}.example.com`],
      upstream: upstreams.urls[0]!,
      credential: { prefix: "Bearer " },
    }));
    const tokens = new Map(apps.map((a) => [`${a.name}-credentials`, `old-${a.name}`]));
    const secrets = () =>
      secretsOf([...tokens].map(([name, token]) => [`apps/${name}`, secretData({ token })]));
    const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
    const held = async (snapshot: Snapshot) => {
      pusher.publish(snapshot);
      await waitUntil(() => pusher.held() === snapshot.revision, { timeoutMs: 10_000 });
    };
    const whole = build(registryOf(apps), secrets(), at(1));
    await held(whole);
    tokens.set("app-150-credentials", "new-app-150");
    const ref = { namespace: "apps", name: "app-150-credentials" };
    await held(rebuildForSecrets(whole, [ref], secrets(), at(2)));
    const got = await Promise.all(
      ["app-150.example.com", "app-149.example.com"].map((host) => ask(proxy.port, { host })),
    );
    expect({
      pushes: relay.requests.filter((r) => r.endsWith(" /replica-mirror/table")),
      sent: got.map((a) => a.echoed?.authorization),
    }).toEqual({
      pushes: ["PUT /replica-mirror/table", "PATCH /replica-mirror/table"],
      sent: [[credentialDigest("Bearer new-app-150")], [credentialDigest("Bearer old-app-149")]],
    });
  });
});
