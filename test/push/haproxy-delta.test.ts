// HAProxy's routing map changed entry by entry (ADR 58), through the real HAProxy with the
// shipped zero-hop haproxy.cfg and its runtime API behind a relay that records each command's
// first line: a Secret change sends its App's entries, then the REVISION, and nothing else; past
// the bound, or after a Registry change, the map goes whole; a push refused half way leaves every
// key some Snapshot's entry and the next push, whole, repairs it; and HAProxy holds, entry by
// entry, what was pushed (ADR 51's digest).

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeCommand } from "../../src/push/haproxy-runtime.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import type { PushTarget } from "../../src/push/target.ts";
import { ok } from "../../src/result.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { release } from "../support/release.ts";
import { findTool } from "../support/tools.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { ask, type EchoUpstreams, startEchoUpstreams } from "../support/zero-hop.ts";
import { startZeroHopHaproxy, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { type RuntimeRelay, startRuntimeRelay } from "./haproxy-certificates-world.ts";

const haproxy = findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]);

/** The commands of a whole push of the routing map, as `pushed` names them. */
const WHOLE = [
  "prepare map routing",
  "show map",
  "add map @v routing",
  "show map",
  "commit map @v routing",
];

// Skipped only where the proxy binary is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(haproxy.path === undefined)("HAProxy's routing map changed entry by entry", () => {
  let dir: string;
  let upstreams: EchoUpstreams;
  let proxy: ZeroHopProxy;
  let relay: RuntimeRelay;
  let maps: { routing: string; credentials: string };
  // Three chunks of Apps (64 each), each with a hostname and a wildcard, every third with a
  // credential.
  let apps: AppInput[];
  const tokens = new Map<string, string>();
  const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
  const secrets = () =>
    secretsOf(
      [...tokens].map(([app, token]) => [`apps/${app}-credentials`, secretData({ token })]),
    );
  /** `from` rebuilt after `app`'s Secret changed to `token`, as the mirror builds it. */
  const changed = (from: Snapshot, app: string, token: string) => {
    tokens.set(app, token);
    const ref = { namespace: "apps", name: `${app}-credentials` };
    return rebuildForSecrets(from, [ref], secrets(), at(from.revision + 1));
  };
  const targetOf = (maxSetEntries?: number) =>
    haproxyTarget({
      socket: join(dir, "relay.sock"),
      map: maps.routing,
      credentialsMap: maps.credentials,
      ...(maxSetEntries === undefined ? {} : { maxSetEntries }),
    });
  /**
   * The commands since `from`, the maps named by role, credentials' values cut, a payload a
   * command each: one line for all of them.
   */
  const commandsSince = (from: number) =>
    relay.commands
      .slice(from)
      .map((line) => {
        const named = line
          .replaceAll(maps.credentials, "credentials")
          .replaceAll(maps.routing, "routing")
          .replace(/@\d+/, "@v");
        return named.includes(" credentials ") ? named.split(" ").slice(0, 4).join(" ") : named;
      })
      .filter((c, i, all) => !c.startsWith("add map @v") || c !== all[i - 1]);
  /** Pushes `view` with `target`: the commands it sent, whether HAProxy holds `view` entry by entry. */
  async function pushed(target: PushTarget, view: Snapshot) {
    const from = relay.commands.length;
    const result = await target.push(view);
    const commands = commandsSince(from);
    const held = await target.heldDigest();
    return { result, commands, holds: held.ok && held.value === target.digestOf(view) };
  }
  /** What a client gets for `host`: the App's refusal, or the App it reached. */
  const answerFor = async (host: string) => {
    const got = await ask(proxy.port, { host });
    return got.echoed?.mirror["x-mirror-app"] ?? got.reason;
  };
  const port = () => new URL(upstreams.urls[0]!).port;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
    upstreams = await startEchoUpstreams(1);
    proxy = await startZeroHopHaproxy(haproxy.path!, dir);
    relay = await startRuntimeRelay(join(dir, "relay.sock"), proxy.socket);
    maps = {
      routing: join(dir, "replica-mirror.map"),
      credentials: join(dir, "replica-mirror-credentials.map"),
    };
    apps = Array.from({ length: 150 }, (_, i) => ({
      name: `app-${String(i).padStart(3, "0")}`,
      hostnames: [`app-${i}.example.com`, `*.w${i}.example.com`],
      upstream: upstreams.urls[0]!,
      ...(i % 3 === 0 ? { credential: { prefix: "Bearer " } } : {}),
    }));
  }, 30_000);

  afterAll(() => release(relay, proxy, upstreams, dir));

  /** A Snapshot of every App ready, at `revision`. */
  const everyAppReady = (revision: number) => {
    for (const a of apps) tokens.set(a.name, `t-${a.name}`);
    return build(registryOf(apps), secrets(), at(revision));
  };

  it("sends a Secret change as its App's entries, then the REVISION, and nothing else", async () => {
    const target = targetOf();
    const first = everyAppReady(1);
    const steps = [await pushed(target, first)];
    // An App with a credential no longer ready, one without, a rotation, and one ready again.
    const lost = changed(first, "app-006", "");
    const other = changed(lost, "app-070", "");
    const rotation = changed(other, "app-141", "rotated");
    const back = changed(rotation, "app-070", "t");
    for (const view of [lost, other, rotation, back]) steps.push(await pushed(target, view));
    const answers = await Promise.all(
      ["app-6.example.com", "x.w6.example.com", "app-70.example.com", "app-71.example.com"].map(
        answerFor,
      ),
    );
    const succeeded = { result: ok(undefined), holds: true };
    expect({ steps, answers }).toEqual({
      steps: [
        {
          ...succeeded,
          commands: [
            "prepare map credentials",
            ...WHOLE.slice(1).map((c) => c.replace("routing", "credentials")),
            ...WHOLE,
          ],
        },
        {
          ...succeeded,
          commands: [
            "set map routing app-6.example.com S|app-006;set map routing w6.example.com/W S|app-006",
            "set map routing REVISION 2",
            "del map credentials app-006",
          ],
        },
        {
          ...succeeded,
          commands: [
            "set map routing app-70.example.com S|app-070;set map routing w70.example.com/W S|app-070",
            "set map routing REVISION 3",
          ],
        },
        {
          ...succeeded,
          commands: ["set map credentials app-141", "set map routing REVISION 4"],
        },
        {
          ...succeeded,
          commands: [
            `set map routing app-70.example.com I|app-070|127.0.0.1|${port()}|;set map routing w70.example.com/W I|app-070|127.0.0.1|${port()}|`,
            "set map routing REVISION 5",
          ],
        },
      ],
      answers: ["secret-unavailable", "secret-unavailable", "app-070", "app-071"],
    });
  });

  it("sends the map whole past its bound of entries, and after a Registry change", async () => {
    const target = targetOf(1);
    const first = everyAppReady(10);
    await pushed(target, first);
    // Two entries changed, one allowed: whole.
    const over = changed(first, "app-071", "");
    // One App fewer: a Registry change.
    const fewer = build(registryOf(apps.slice(1)), secrets(), at(12));
    const steps = [await pushed(target, over), await pushed(target, fewer)];
    const answers = await Promise.all(["app-71.example.com", "app-0.example.com"].map(answerFor));
    expect({ steps, answers }).toEqual({
      steps: [
        { result: ok(undefined), holds: true, commands: [...WHOLE] },
        {
          result: ok(undefined),
          holds: true,
          commands: [...WHOLE, "del map credentials app-000"],
        },
      ],
      answers: ["secret-unavailable", "unknown-host"],
    });
  });

  it("leaves each key some Snapshot's entry when a push is refused half way, and the next push repairs it whole", async () => {
    const target = targetOf();
    const first = everyAppReady(20);
    await pushed(target, first);
    // Behind the target's back: the App's wildcard entry gone, so its `set map` is refused.
    expect(
      await runtimeCommand(proxy.socket, `del map ${maps.routing} w72.example.com/W`, 2_000),
    ).toEqual(ok(""));
    const next = changed(first, "app-072", "");
    const refused = await pushed(target, next);
    const between = {
      held: await target.held(),
      answers: await Promise.all(["app-72.example.com", "x.w72.example.com"].map(answerFor)),
    };
    const repaired = await pushed(target, next);
    const after = await Promise.all(["app-72.example.com", "x.w72.example.com"].map(answerFor));
    expect({ refused, between, repaired, after }).toEqual({
      refused: {
        result: {
          ok: false,
          error: { reason: "rejected", message: `'set map ${maps.routing}': entry not found.` },
        },
        commands: [
          "set map routing app-72.example.com S|app-072;set map routing w72.example.com/W S|app-072",
        ],
        holds: false,
      },
      // The one entry set is the new Snapshot's, the REVISION still the old one's.
      between: { held: ok(20), answers: ["secret-unavailable", "unknown-host"] },
      // Whole: both maps, and the credential no entry flags any more deleted after.
      repaired: {
        result: ok(undefined),
        holds: true,
        commands: [
          "prepare map credentials",
          ...WHOLE.slice(1).map((c) => c.replace("routing", "credentials")),
          ...WHOLE,
          "del map credentials app-072",
        ],
      },
      after: ["secret-unavailable", "secret-unavailable"],
    });
  });

  it("holds each Snapshot entry by entry through a run of Secret changes, none of them whole", async () => {
    const target = targetOf();
    let view = everyAppReady(30);
    await pushed(target, view);
    const steps: { app: string; ok: boolean; holds: boolean; whole: boolean }[] = [];
    for (let i = 0; i < 20; i++) {
      const app = apps[(i * 37) % apps.length]!.name;
      view = changed(view, app, i % 3 === 0 ? "" : `t${i}`);
      const step = await pushed(target, view);
      const whole = step.commands.includes("prepare map routing");
      steps.push({ app, ok: step.result.ok, holds: step.holds, whole });
    }
    expect(steps).toEqual(steps.map(({ app }) => ({ app, ok: true, holds: true, whole: false })));
  });
});
