// nginx's digest two ways (ADR 70): kept as each PUT and PATCH writes, one dict read a check; and
// deep, every key read from the dict again. Through nginx with the shipped zero-hop configuration
// and one location more, which writes the dict directly as no client of the push socket can: the
// kept digest finds a table another client pushed, only the deep one a key changed or lost in the
// dict, and a pusher's deep verification puts such a table back.

import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.ts";
import { adminCall } from "../../src/push/admin-http.ts";
import { nginxTableBody } from "../../src/push/nginx-table.ts";
import { silentPushObserver } from "../../src/push/observer.ts";
import { startPusher } from "../../src/push/pusher.ts";
import { ok } from "../../src/result.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { release } from "../support/release.ts";
import { findTool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import {
  ask,
  credentialDigest,
  type EchoUpstreams,
  startEchoUpstreams,
} from "../support/zero-hop.ts";
import { nginxLaunch, startZeroHop, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";

const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);

// Writes `key` (kind and name, "capp-007") of the whole generation held to `value`, or deletes it.
const DICT_WRITER = `
    location = /test/dict { content_by_lua_block {
      local dict = ngx.shared.replica_mirror
      local key = dict:get("current"):match("^(%d+)") .. ngx.var.arg_key
      local value = ngx.var.arg_value
      if value then dict:set(key, ngx.unescape_uri(value)) else dict:delete(key) end
    } }`;

// Skipped only where nginx is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(nginx.path === undefined)("nginx's kept and deep digests", () => {
  let dir: string;
  let upstreams: EchoUpstreams;
  let proxy: ZeroHopProxy;
  const tokens = new Map<string, string>();
  const name = (i: number) => `app-${String(i).padStart(3, "0")}`;
  const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
  const secrets = () =>
    secretsOf(
      [...tokens].map(([app, token]) => [`apps/${app}-credentials`, secretData({ token })]),
    );
  const registry = () =>
    registryOf(
      Array.from({ length: 50 }, (_, i) => ({
        name: name(i),
        hostnames: [`app-${i}.example.com`],
        upstream: upstreams.urls[0]!,
        credential: { prefix: "Bearer " },
      })),
    );
  const whole = (token: string, revision: number) => {
    for (let i = 0; i < 50; i++) tokens.set(name(i), token);
    return build(registry(), secrets(), at(revision));
  };
  /** `from` after the Secrets of `changes` (App index → token, null: deleted), as the mirror rebuilds. */
  const changed = (from: Snapshot, changes: [number, string | null][], revision: number) => {
    for (const [i, token] of changes) {
      if (token === null) tokens.delete(name(i));
      else tokens.set(name(i), token);
    }
    const refs = changes.map(([i]) => ({ namespace: "apps", name: `${name(i)}-credentials` }));
    return rebuildForSecrets(from, refs, secrets(), at(revision));
  };
  const call = (method: string, path: string, body?: string) =>
    adminCall(proxy.socket, 5_000, { method, path, host: "nginx", body });
  /** Whether each digest, kept and deep, is the one nginx gives while it holds `view`'s table. */
  const matches = async (view: Snapshot) => {
    const expected = ok(proxy.target.digestOf(view));
    const [kept, deep] = [
      await proxy.target.heldDigest(),
      await proxy.target.heldDigest({ deep: true }),
    ];
    return {
      kept: kept.ok && kept.value === expected.value,
      deep: deep.ok && deep.value === expected.value,
    };
  };
  const sent = async (i: number) => {
    const answer = await ask(proxy.port, { host: `app-${i}.example.com` });
    return answer.echoed?.authorization ?? answer.reason;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
    upstreams = await startEchoUpstreams(1);
    const launch = await nginxLaunch(nginx.path!, dir);
    const conf = join(dir, "nginx.conf");
    const shipped = await readFile(conf, "utf8");
    const digestLocation = /^.*location = \/replica-mirror\/digest .*$/m;
    await writeFile(
      conf,
      shipped.replace(digestLocation, (line) => `${line}${DICT_WRITER}`),
    );
    proxy = await startZeroHop(launch);
  }, 30_000);

  afterAll(() => release(proxy, upstreams, dir));

  it("gives the deep digest's answer kept through a PUT and PATCHes that give, rotate and empty credentials", async () => {
    const first = whole("v", 1);
    expect(await proxy.target.push(first, { whole: true })).toEqual(ok(undefined));
    const put = await matches(first);
    const rotated = changed(
      first,
      [
        [1, "r1"],
        [2, null],
      ],
      2,
    );
    expect(await proxy.target.push(rotated)).toEqual(ok(undefined));
    const patched = await matches(rotated);
    const again = changed(
      rotated,
      [
        [1, "r2"],
        [2, "back"],
        [3, "r3"],
      ],
      3,
    );
    expect(await proxy.target.push(again)).toEqual(ok(undefined));
    expect({ put, patched, again: await matches(again) }).toEqual({
      put: { kept: true, deep: true },
      patched: { kept: true, deep: true },
      again: { kept: true, deep: true },
    });
    expect(await sent(1)).toEqual([credentialDigest("Bearer r2")]);
  });

  it("finds a table another client pushed in the kept digest, a key changed or lost in the dict in the deep one only", async () => {
    const view = whole("w", 10);
    expect(await proxy.target.push(view, { whole: true })).toEqual(ok(undefined));
    const forgedBody = nginxTableBody(view).replace(
      "\nc app-007 Bearer w\n",
      "\nc app-007 Bearer x\n",
    );
    expect(await call("PUT", "/replica-mirror/table", forgedBody)).toMatchObject(
      ok({ status: 200 }),
    );
    const forged = await matches(view);
    expect(await proxy.target.push(view, { whole: true })).toEqual(ok(undefined));
    const restored = await matches(view);
    await call("GET", `/test/dict?key=capp-007&value=${encodeURIComponent("Bearer x")}`);
    const altered = { ...(await matches(view)), sent: await sent(7) };
    expect(await proxy.target.push(view, { whole: true })).toEqual(ok(undefined));
    await call("GET", "/test/dict?key==app-8.example.com");
    const lost = { ...(await matches(view)), sent: await sent(8) };
    expect({ forged, restored, altered, lost }).toEqual({
      forged: { kept: false, deep: false },
      restored: { kept: true, deep: true },
      altered: { kept: true, deep: false, sent: [credentialDigest("Bearer x")] },
      lost: { kept: true, deep: false, sent: "unknown-host" },
    });
  });

  it("has the pusher's deep verification put back a key changed in the dict", async () => {
    const drifts: number[] = [];
    const pusher = startPusher({
      target: proxy.target,
      clock: systemClock,
      observer: { ...silentPushObserver, drifted: (e) => drifts.push(e.revision) },
      verifyIntervalMs: 100,
      deepVerifyIntervalMs: 600,
    });
    try {
      pusher.publish(whole("p", 20));
      await waitUntil(() => pusher.held() === 20, { what: "nginx to hold revision 20" });
      await call("GET", `/test/dict?key=capp-009&value=${encodeURIComponent("Bearer x")}`);
      const altered = await sent(9);
      await waitUntil(async () => (await sent(9))?.[0] === credentialDigest("Bearer p"), {
        timeoutMs: 5_000,
        intervalMs: 20,
        what: "the pusher to put app-009's credential back",
      });
      expect({ altered, drifts }).toEqual({
        altered: [credentialDigest("Bearer x")],
        drifts: [20],
      });
    } finally {
      await pusher.close();
    }
  }, 15_000);
});
