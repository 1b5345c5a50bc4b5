// nginx's credentials, once per App beside the entries that flag them (replica-mirror.lua): a
// PATCH that gives an App a credential, empties one and rotates one, and the digest nginx
// rebuilds from its dict for it (the overlay's new credentials merged in by App name); a flagged
// App whose credential the table lacks refused, not sent on without it, and that table seen as
// drift; a credential that would split the header refused at the push. Credentials are compared
// as digests.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../src/push/admin-http.ts";
import { nginxTableBody } from "../../src/push/nginx-table.ts";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import type { PushTarget } from "../../src/push/target.ts";
import { ok } from "../../src/result.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { release } from "../support/release.ts";
import { findTool } from "../support/tools.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import {
  ask,
  credentialDigest,
  type EchoUpstreams,
  NGINX_ANSWERS,
  startEchoUpstreams,
} from "../support/zero-hop.ts";
import { startZeroHopNginx, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { type SocketRelay, startSocketRelay } from "../support/zero-hop-relay.ts";

const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);

// Skipped only where nginx is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(nginx.path === undefined)("nginx's credentials", () => {
  let dir: string;
  let upstreams: EchoUpstreams;
  let proxy: ZeroHopProxy;
  let relay: SocketRelay;
  let target: PushTarget;
  const tokens = new Map<string, string>();
  const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
  const secrets = () =>
    secretsOf(
      [...tokens].map(([app, token]) => [`apps/${app}-credentials`, secretData({ token })]),
    );
  const apps = () =>
    Array.from({ length: 200 }, (_, i) => ({
      name: `app-${String(i).padStart(3, "0")}`,
      hostnames: [`app-${i}.example.com`],
      upstream: upstreams.urls[0]!,
      credential: { prefix: "Bearer " },
    }));
  /** `from` after the Secrets of `changes` (App index → token, null: deleted), as the mirror rebuilds. */
  const changed = (from: Snapshot, changes: [number, string | null][], revision: number) => {
    for (const [i, token] of changes) {
      const name = `app-${String(i).padStart(3, "0")}`;
      if (token === null) tokens.delete(name);
      else tokens.set(name, token);
    }
    const refs = changes.map(([i]) => ({
      namespace: "apps",
      name: `app-${String(i).padStart(3, "0")}-credentials`,
    }));
    return rebuildForSecrets(from, refs, secrets(), at(revision));
  };
  /** What each App's upstream got as Authorization, as digests; or the refusal's reason. */
  const sent = (indexes: readonly number[]) =>
    Promise.all(
      indexes.map(async (i) => {
        const answer = await ask(proxy.port, { host: `app-${i}.example.com` });
        return answer.echoed?.authorization ?? answer.reason;
      }),
    );
  /** Whether nginx holds exactly `view`'s table, by the digest the pusher compares (ADR 51). */
  const holds = async (view: Snapshot) => {
    const held = await target.heldDigest();
    return held.ok && held.value === target.digestOf(view);
  };
  const pushes = () => relay.requests.filter((r) => r.endsWith(" /replica-mirror/table"));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
    upstreams = await startEchoUpstreams(1);
    proxy = await startZeroHopNginx(nginx.path!, dir);
    relay = await startSocketRelay(join(dir, "relay.sock"), proxy.socket);
    target = nginxTarget({ socket: join(dir, "relay.sock") });
  }, 30_000);

  afterAll(() => release(relay, proxy, upstreams, dir));

  it("gives, empties and rotates credentials by PATCH, and rebuilds the same digest from its dict", async () => {
    // Every third App without its Secret: no credential line in the whole table.
    for (const [i, a] of apps().entries()) if (i % 3 !== 0) tokens.set(a.name, `t${i}`);
    const whole = build(registryOf(apps()), secrets(), at(1));
    const one = changed(
      whole,
      [
        [99, "new99"],
        [151, null],
        [100, "r100"],
      ],
      2,
    );
    const two = changed(
      one,
      [
        [3, "new3"],
        [199, "new199"],
      ],
      3,
    );
    const steps = [];
    for (const view of [whole, one, two]) {
      expect(await target.push(view)).toEqual(ok(undefined));
      steps.push({ holds: await holds(view), sent: await sent([3, 99, 100, 151, 199]) });
    }
    const d = (token: string) => [credentialDigest(`Bearer ${token}`)];
    expect({ pushes: pushes(), steps }).toEqual({
      pushes: [
        "PUT /replica-mirror/table",
        "PATCH /replica-mirror/table",
        "PATCH /replica-mirror/table",
      ],
      steps: [
        {
          holds: true,
          sent: ["secret-unavailable", "secret-unavailable", d("t100"), d("t151"), d("t199")],
        },
        {
          holds: true,
          sent: ["secret-unavailable", d("new99"), d("r100"), "secret-unavailable", d("t199")],
        },
        {
          holds: true,
          sent: [d("new3"), d("new99"), d("r100"), "secret-unavailable", d("new199")],
        },
      ],
    });
  });

  it("refuses a flagged App whose credential the table lacks, sees that table as drift, and a whole push puts it back", async () => {
    tokens.clear();
    for (const a of apps()) tokens.set(a.name, "v");
    const view = build(registryOf(apps()), secrets(), at(10));
    expect(await target.push(view, { whole: true })).toEqual(ok(undefined));
    // Another client of the socket: the same table without app-007's credential line.
    const forged = nginxTableBody(view)
      .split("\n")
      .filter((l) => !l.startsWith("c app-007 "))
      .join("\n");
    const put = { method: "PUT", path: "/replica-mirror/table", host: "nginx", body: forged };
    expect((await adminCall(proxy.socket, 5_000, put)).ok).toBe(true);
    const missing = {
      answer: await ask(proxy.port, { host: "app-7.example.com" }),
      holds: await holds(view),
    };
    expect(await target.push(view, { whole: true })).toEqual(ok(undefined));
    expect({
      missing,
      restored: { holds: await holds(view), sent: await sent([7]) },
    }).toEqual({
      missing: { answer: NGINX_ANSWERS.notSynced, holds: false },
      restored: { holds: true, sent: [[credentialDigest("Bearer v")]] },
    });
  });

  it("refuses a push whose credential holds a CR or NUL, and keeps the table it holds", async () => {
    tokens.clear();
    for (const a of apps()) tokens.set(a.name, "v");
    const view = build(registryOf(apps()), secrets(), at(30));
    expect(await target.push(view, { whole: true })).toEqual(ok(undefined));
    // Another client of the socket: app-007's credential with a byte that would split the header.
    const forged = (byte: string) =>
      nginxTableBody(view).replace("\nc app-007 Bearer v\n", `\nc app-007 Bearer v${byte}X: y\n`);
    const answers = [];
    for (const byte of ["\r", "\0"]) {
      const put = {
        method: "PUT",
        path: "/replica-mirror/table",
        host: "nginx",
        body: forged(byte),
      };
      const answer = await adminCall(proxy.socket, 5_000, put);
      answers.push(answer.ok ? answer.value.status : answer.error);
    }
    expect({ answers, holds: await holds(view), sent: await sent([7]) }).toEqual({
      answers: [400, 400],
      holds: true,
      sent: [[credentialDigest("Bearer v")]],
    });
  });

  it("sends a whole table's credential at once, though a worker read the one before it", async () => {
    const whole = async (token: string, revision: number) => {
      for (const a of apps()) tokens.set(a.name, token);
      const view = build(registryOf(apps()), secrets(), at(revision));
      expect(await target.push(view, { whole: true })).toEqual(ok(undefined));
      return sent([5, 5, 5]);
    };
    const before = await whole("before", 20);
    const after = await whole("after", 21);
    const d = [credentialDigest("Bearer before"), credentialDigest("Bearer after")];
    expect({ before, after }).toEqual({
      before: [[d[0]], [d[0]], [d[0]]],
      after: [[d[1]], [d[1]], [d[1]]],
    });
  });
});
