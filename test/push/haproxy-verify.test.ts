// HAProxy's two verifications (ADR 70), through the shipped zero-hop haproxy.cfg: the shallow one
// (the overlays' entries, the big maps' versions and counts) agrees with the deep one (every entry)
// through whole and overlay pushes; it finds an overlay entry written or lost, an entry added to or
// deleted from a big map, a big map replaced, a restart; an entry of a big map changed in place
// only the deep one finds.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { overlayOf } from "../../src/push/haproxy-overlay.ts";
import { runtimeCommand } from "../../src/push/haproxy-runtime.ts";
import { ok } from "../../src/result.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { release } from "../support/release.ts";
import { findTool } from "../support/tools.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { type EchoUpstreams, startEchoUpstreams } from "../support/zero-hop.ts";
import { startZeroHopHaproxy, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";

const haproxy = findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]);

// Skipped only where the proxy binary is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(haproxy.path === undefined)("HAProxy's shallow and deep verifications", () => {
  let dir: string;
  let upstreams: EchoUpstreams;
  let proxy: ZeroHopProxy;
  const tokens = new Map<string, string>();
  const name = (i: number) => `app-${i}`;
  const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
  const secrets = () =>
    secretsOf(
      [...tokens].map(([app, token]) => [`apps/${app}-credentials`, secretData({ token })]),
    );
  const whole = (token: string, revision: number) => {
    for (let i = 0; i < 20; i++) tokens.set(name(i), token);
    const apps = Array.from({ length: 20 }, (_, i) => ({
      name: name(i),
      hostnames: [`${name(i)}.example.com`],
      upstream: upstreams.urls[0]!,
      credential: { prefix: "Bearer " },
    }));
    return build(registryOf(apps), secrets(), at(revision));
  };
  const rotated = (from: Snapshot, i: number, token: string, revision: number) => {
    tokens.set(name(i), token);
    const ref = { namespace: "apps", name: `${name(i)}-credentials` };
    return rebuildForSecrets(from, [ref], secrets(), at(revision));
  };
  const maps = () => {
    const [routing, credentials] = ["replica-mirror.map", "replica-mirror-credentials.map"].map(
      (f) => join(dir, f),
    ) as [string, string];
    return { routing, credentials, overlay: overlayOf(credentials) };
  };
  const tamper = async (command: string) =>
    expect(await runtimeCommand(proxy.socket, command, 2_000)).toEqual(ok(""));
  /** Whether each verification, shallow and deep, finds HAProxy holding exactly `view`. */
  const holds = async (view: Snapshot) => {
    const { target } = proxy;
    const [shallow, deep] = [await target.heldDigest(), await target.heldDigest({ deep: true })];
    return {
      shallow: shallow.ok && shallow.value === target.digestOf(view),
      deep: deep.ok && deep.value === target.digestOf(view, { deep: true }),
    };
  };
  /** `view` pushed whole, `tampered` run, what each verification finds; then `view` whole again. */
  const after = async (view: Snapshot, tampered: () => Promise<unknown>) => {
    expect(await proxy.target.push(view, { whole: true })).toEqual(ok(undefined));
    await tampered();
    const found = await holds(view);
    expect(await proxy.target.push(view, { whole: true })).toEqual(ok(undefined));
    return found;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
    upstreams = await startEchoUpstreams(1);
    proxy = await startZeroHopHaproxy(haproxy.path!, dir);
  }, 30_000);

  afterAll(() => release(proxy, upstreams, dir));

  it("agree through a whole push and rotations into the overlay", async () => {
    const first = whole("v", 1);
    expect(await proxy.target.push(first)).toEqual(ok(undefined));
    const put = await holds(first);
    const second = rotated(first, 3, "r3", 2);
    expect(await proxy.target.push(second)).toEqual(ok(undefined));
    const third = rotated(second, 3, "r3b", 3);
    expect(await proxy.target.push(third)).toEqual(ok(undefined));
    expect({ put, rotated: await holds(third), before: await holds(second) }).toEqual({
      put: { shallow: true, deep: true },
      rotated: { shallow: true, deep: true },
      before: { shallow: false, deep: false },
    });
  });

  it("find what each must: the shallow one what a change writes or a count shows, the deep one an entry changed in place", async () => {
    const view = whole("w", 10);
    const { routing, credentials, overlay } = maps();
    const found = {
      overlayWritten: await after(view, () => tamper(`add map ${overlay} app-4 Bearer\\ x`)),
      routingDeleted: await after(view, () => tamper(`del map ${routing} app-5.example.com`)),
      credentialAdded: await after(view, () => tamper(`add map ${credentials} other Bearer\\ x`)),
      routingReplaced: await after(view, async () => {
        const version = await runtimeCommand(proxy.socket, `prepare map ${routing}`, 2_000);
        const id = version.ok ? /(\d+)$/.exec(version.value)?.[1] : undefined;
        await tamper(`commit map @${id} ${routing}`);
      }),
      routingChanged: await after(view, () =>
        tamper(`set map ${routing} app-6.example.com U|app-6|||`),
      ),
      credentialChanged: await after(view, () => tamper(`set map ${credentials} app-7 Bearer\\ x`)),
    };
    expect(found).toEqual({
      overlayWritten: { shallow: false, deep: false },
      routingDeleted: { shallow: false, deep: false },
      credentialAdded: { shallow: false, deep: false },
      routingReplaced: { shallow: false, deep: false },
      routingChanged: { shallow: true, deep: false },
      credentialChanged: { shallow: true, deep: false },
    });
  });

  it("finds a restarted HAProxy holding no table", async () => {
    const view = whole("z", 20);
    expect(await proxy.target.push(view, { whole: true })).toEqual(ok(undefined));
    await proxy.restart();
    const { target } = proxy;
    expect([await target.heldDigest(), await target.heldDigest({ deep: true })]).toEqual([
      ok(null),
      ok(null),
    ]);
  });
});
