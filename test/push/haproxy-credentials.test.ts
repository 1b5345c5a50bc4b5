// HAProxy's credentials map beside its routing map (src/push/haproxy-target.ts), through the
// shipped zero-hop haproxy.cfg: what each push writes there and in which order around the routing
// entries (a new App's credential before them, a dropped one after, a rotation one key and the
// revision), what the map then holds, every byte a credential may hold kept both ways it is
// written, a flagged App whose credential is missing refused rather than sent on without it, and
// a changed credential seen as drift. Credentials are compared as digests.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { overlayOf } from "../../src/push/haproxy-overlay.ts";
import { runtimeCommand } from "../../src/push/haproxy-runtime.ts";
import { haproxyTarget } from "../../src/push/haproxy-target.ts";
import type { PushTarget } from "../../src/push/target.ts";
import { ok } from "../../src/result.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { release } from "../support/release.ts";
import { findTool } from "../support/tools.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import {
  ask,
  credentialDigest,
  type EchoUpstreams,
  startEchoUpstreams,
  TEXT_ANSWERS,
} from "../support/zero-hop.ts";
import { startZeroHopHaproxy, type ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { type SocketRelay, startSocketRelay } from "../support/zero-hop-relay.ts";

const haproxy = findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]);

// Every byte a credential may hold, spaces and tabs around it, and each character the runtime
// API's command line escapes.
const EVERY_BYTE = ` \t${Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)).join("")} a\\;b\t `;

// Skipped only where the proxy binary is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(haproxy.path === undefined)("HAProxy's credentials map", () => {
  let dir: string;
  let upstreams: EchoUpstreams;
  let proxy: ZeroHopProxy;
  let relay: SocketRelay;
  let target: PushTarget;
  let names: Record<string, string>;
  const tokens = new Map<string, string>();
  const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
  const secrets = () =>
    secretsOf(
      [...tokens].map(([app, token]) => [`apps/${app}-credentials`, secretData({ token })]),
    );
  const app = (name: string, credential: boolean): AppInput => ({
    name,
    hostnames: [`${name}.example.com`],
    upstream: upstreams.urls[0]!,
    ...(credential ? { credential: { prefix: "Bearer " } } : {}),
  });
  /** Rebuilds `from` for `app`'s Secret, as the mirror does for one Secret change. */
  const rotated = (from: Snapshot, name: string, token: string | null, revision: number) => {
    if (token === null) tokens.delete(name);
    else tokens.set(name, token);
    const ref = { namespace: "apps", name: `${name}-credentials` };
    return rebuildForSecrets(from, [ref], secrets(), at(revision));
  };

  /** Pushes `view`: the runtime API commands it took, each without its payload or value. */
  async function pushed(view: Snapshot, whole = false): Promise<string[]> {
    const from = relay.requests.length;
    expect(await target.push(view, { whole })).toEqual(ok(undefined));
    const sent = relay.requests.slice(from).map(commandOf);
    // A payload a command each: one line for all of them.
    return sent.filter((c, i) => c !== sent[i - 1]);
  }
  /** A command's verb, its map's name and its key, never a value. */
  function commandOf(line: string): string {
    const [verb, object, ...rest] = line.split(" ");
    const out = [verb, object];
    if (rest[0]?.startsWith("@")) out.push(`@v`, names[rest[1]!] ?? "?");
    else if (rest[0] !== undefined) out.push(names[rest[0]] ?? "?", ...(rest[1] ? [rest[1]] : []));
    return out.join(" ");
  }
  /** The credentials as HAProxy holds them, its overlay's over its map's: each App's value as a digest. */
  async function credentialsHeld(): Promise<Record<string, string>> {
    const held: Record<string, string> = {};
    for (const file of [
      "replica-mirror-credentials.map",
      "replica-mirror-credentials-overlay.map",
    ]) {
      const shown = await runtimeCommand(proxy.socket, `show map ${join(dir, file)}`, 2_000, true);
      if (!shown.ok) throw new Error(shown.error.message);
      for (const line of shown.value === "" ? [] : shown.value.split("\n")) {
        const m = /^0x[0-9a-f]+ (\S+) (.*)$/.exec(line)!;
        held[m[1]!] = credentialDigest(m[2]!);
      }
    }
    return held;
  }
  /**
   * Whether HAProxy holds exactly `view`'s maps, by both digests the pusher compares (ADR 51, 70):
   * the shallow one and the deep one.
   */
  const holds = async (view: Snapshot) => {
    const [shallow, deep] = [await target.heldDigest(), await target.heldDigest({ deep: true })];
    return (
      shallow.ok &&
      shallow.value === target.digestOf(view) &&
      deep.ok &&
      deep.value === target.digestOf(view, { deep: true })
    );
  };
  /** What the upstream of `name` got as Authorization, as digests; or the refusal's reason. */
  const sent = async (name: string) => {
    const answer = await ask(proxy.port, { host: `${name}.example.com` });
    return answer.echoed?.authorization ?? answer.reason;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
    upstreams = await startEchoUpstreams(1);
    proxy = await startZeroHopHaproxy(haproxy.path!, dir);
    relay = await startSocketRelay(join(dir, "relay.sock"), proxy.socket);
    const [map, credentialsMap] = ["replica-mirror.map", "replica-mirror-credentials.map"].map(
      (f) => join(dir, f),
    ) as [string, string];
    names = {
      [map]: "routing",
      [credentialsMap]: "credentials",
      [overlayOf(map)]: "routing-overlay",
      [overlayOf(credentialsMap)]: "credentials-overlay",
    };
    target = haproxyTarget({ socket: join(dir, "relay.sock"), map, credentialsMap });
  }, 30_000);

  afterAll(() => release(relay, proxy, upstreams, dir));

  it("writes a credential before the routing entries that flag it and deletes it after those that stop, a rotation one key and the revision", async () => {
    for (const [name, token] of [
      ["a", "a1"],
      ["b", "b1"],
      ["c", "c1"],
      ["o", "o1"],
    ])
      tokens.set(name!, token!);
    const first = build(
      registryOf([app("a", true), app("b", true), app("o", false)]),
      secrets(),
      at(1),
    );
    const added = build(
      registryOf([app("a", true), app("c", true), app("o", false)]),
      secrets(),
      at(2),
    );
    const rotation = rotated(added, "a", "a2", 3);
    const lost = rotated(rotation, "c", null, 4);
    const whole = ["show map", "add map @v", "show map", "commit map @v"];
    const steps = [];
    for (const view of [first, added, rotation, lost]) {
      steps.push({
        commands: await pushed(view),
        held: await credentialsHeld(),
        sent: await Promise.all(["a", "b", "c", "o"].map(sent)),
      });
    }
    const digest = (v: string) => credentialDigest(`Bearer ${v}`);
    // An emptied map: no add, so its two `show map`s are one line here.
    const replaced = (m: string, empty = false) =>
      empty
        ? [`prepare map ${m}`, "show map", `commit map @v ${m}`]
        : [`prepare map ${m}`, ...whole.map((c) => c.replace("@v", `@v ${m}`))];
    const routingWhole = [...replaced("routing"), ...replaced("routing-overlay")];
    expect(steps).toEqual([
      {
        commands: [
          ...replaced("credentials"),
          ...routingWhole,
          ...replaced("credentials-overlay", true),
        ],
        held: { a: digest("a1"), b: digest("b1") },
        sent: [[digest("a1")], [digest("b1")], "unknown-host", []],
      },
      {
        // A Registry change: the routing map whole, the credentials into their overlay.
        commands: ["add map credentials-overlay c", ...routingWhole, "del map credentials b"],
        held: { a: digest("a1"), c: digest("c1") },
        sent: [[digest("a1")], "unknown-host", [digest("c1")], []],
      },
      {
        commands: ["add map credentials-overlay a", "set map routing-overlay REVISION"],
        held: { a: digest("a2"), c: digest("c1") },
        sent: [[digest("a2")], "unknown-host", [digest("c1")], []],
      },
      {
        // A Secret change: the App's entry into the routing overlay (ADR 60).
        commands: [
          "add map routing-overlay c",
          "set map routing-overlay REVISION",
          "del map credentials-overlay c",
        ],
        held: { a: digest("a2") },
        sent: [[digest("a2")], "unknown-host", "secret-unavailable", []],
      },
    ]);
  });

  it("keeps every byte a credential may hold, written whole and rotated by key", async () => {
    tokens.set("x", EVERY_BYTE);
    const apps = [{ ...app("x", true), credential: {} }];
    const first = build(registryOf(apps), secrets(), at(10));
    const reversed = [...EVERY_BYTE].reverse().join("");
    const second = rotated(first, "x", reversed, 11);
    const got = [];
    for (const [view, whole] of [
      [first, true],
      [second, false],
    ] as const) {
      const commands = await pushed(view, whole);
      got.push({
        rotatedByKey: commands[0] === "add map credentials-overlay x",
        holds: await holds(view),
        sent: await sent("x"),
      });
    }
    expect(got).toEqual([
      { rotatedByKey: false, holds: true, sent: [credentialDigest(EVERY_BYTE)] },
      { rotatedByKey: true, holds: true, sent: [credentialDigest(reversed)] },
    ]);
  });

  it("refuses a flagged App whose credential is not held, sees a changed one as drift, and a whole push puts both back", async () => {
    tokens.set("v", "v1");
    const view = build(registryOf([app("v", true)]), secrets(), at(20));
    await pushed(view, true);
    const map = join(dir, "replica-mirror-credentials.map");
    const tamper = (command: string) => runtimeCommand(proxy.socket, command, 2_000);
    expect(await tamper(`del map ${map} v`)).toEqual(ok(""));
    const missing = {
      answer: await ask(proxy.port, { host: "v.example.com" }),
      holds: await holds(view),
    };
    expect(await tamper(`add map ${map} v Bearer\\ forged`)).toEqual(ok(""));
    const changed = { holds: await holds(view) };
    await pushed(view, true);
    expect({
      missing,
      changed,
      restored: { holds: await holds(view), sent: await sent("v") },
    }).toEqual({
      missing: { answer: TEXT_ANSWERS.notSynced, holds: false },
      changed: { holds: false },
      restored: { holds: true, sent: [credentialDigest("Bearer v1")] },
    });
  });
});
