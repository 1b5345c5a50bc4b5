// HAProxy's routing map changed through its overlay (ADR 60), through the real HAProxy with the
// shipped zero-hop haproxy.cfg and its runtime API behind a relay that records each command's
// first line: a Secret change sends its App's one overlay entry, then the REVISION, and nothing
// else; past the bound, or after a Registry change, the map goes whole and the overlay is
// emptied; a push refused half way leaves every App some Snapshot's entry and the next push,
// whole, repairs it; and HAProxy holds, entry by entry, what was pushed (ADR 51's digest).

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

/** The commands that replace map `m` whole, as `pushed` names them; `empty`: with no entry. */
const replaced = (m: string, empty = false) => [
  `prepare map ${m}`,
  "show map",
  ...(empty ? [] : [`add map @v ${m}`]),
  "show map",
  `commit map @v ${m}`,
];
/** A whole push of the routing map: the map, then its overlay emptied to the REVISION. */
const WHOLE = [...replaced("routing"), ...replaced("routing-overlay")];
/** A whole push of every map: the credentials, the routing map, both overlays emptied. */
const ALL = [...replaced("credentials"), ...WHOLE, ...replaced("credentials-overlay", true)];

// Skipped only where the proxy binary is not installed; .ci/run installs it, so CI runs it.
describe.skipIf(haproxy.path === undefined)(
  "HAProxy's routing map changed through its overlay",
  () => {
    let dir: string;
    let upstreams: EchoUpstreams;
    let proxy: ZeroHopProxy;
    let relay: RuntimeRelay;
    let maps: { routing: string; credentials: string; overlay: string; credentialsOverlay: string };
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
    const targetOf = (maxOverlayApps?: number) =>
      haproxyTarget({
        socket: join(dir, "relay.sock"),
        map: maps.routing,
        credentialsMap: maps.credentials,
        ...(maxOverlayApps === undefined ? {} : { maxOverlayApps }),
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
            .replaceAll(maps.credentialsOverlay, "credentials-overlay")
            .replaceAll(maps.overlay, "routing-overlay")
            .replaceAll(maps.credentials, "credentials")
            .replaceAll(maps.routing, "routing")
            .replace(/@\d+/, "@v");
          return / credentials(-overlay)? /.test(named)
            ? named.split(" ").slice(0, 4).join(" ")
            : named;
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
        overlay: join(dir, "replica-mirror-overlay.map"),
        credentialsOverlay: join(dir, "replica-mirror-credentials-overlay.map"),
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

    it("sends a Secret change as its App's overlay entry, then the REVISION, and nothing else", async () => {
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
          { ...succeeded, commands: ALL },
          {
            ...succeeded,
            commands: [
              "add map routing-overlay app-006 S|app-006",
              "set map routing-overlay REVISION 2",
              "del map credentials app-006",
            ],
          },
          {
            ...succeeded,
            commands: [
              "add map routing-overlay app-070 S|app-070",
              "set map routing-overlay REVISION 3",
            ],
          },
          {
            ...succeeded,
            commands: ["add map credentials-overlay app-141", "set map routing-overlay REVISION 4"],
          },
          {
            ...succeeded,
            commands: [
              `set map routing-overlay app-070 I|app-070|127.0.0.1|${port()}|`,
              "set map routing-overlay REVISION 5",
            ],
          },
        ],
        answers: ["secret-unavailable", "secret-unavailable", "app-070", "app-071"],
      });
    });

    it("sends the map whole past its bound of Apps, and after a Registry change", async () => {
      const target = targetOf(1);
      const first = everyAppReady(10);
      await pushed(target, first);
      // Two Apps changed, one allowed: whole.
      const over = changed(changed(first, "app-071", ""), "app-072", "");
      // One App fewer: a Registry change.
      const fewer = build(registryOf(apps.slice(1)), secrets(), at(12));
      const steps = [await pushed(target, over), await pushed(target, fewer)];
      const answers = await Promise.all(["app-71.example.com", "app-0.example.com"].map(answerFor));
      expect({ steps, answers }).toEqual({
        steps: [
          {
            result: ok(undefined),
            holds: true,
            commands: [...WHOLE, "del map credentials app-072"],
          },
          {
            result: ok(undefined),
            holds: true,
            commands: [...WHOLE, "del map credentials app-000"],
          },
        ],
        answers: ["secret-unavailable", "unknown-host"],
      });
    });

    it("leaves each App some Snapshot's entry when a push is refused half way, and the next push repairs it whole", async () => {
      const target = targetOf();
      const first = everyAppReady(20);
      await pushed(target, first);
      const second = changed(first, "app-072", "");
      await pushed(target, second);
      // Behind the target's back: the App's overlay entry gone, so its `set map` is refused.
      expect(await runtimeCommand(proxy.socket, `del map ${maps.overlay} app-072`, 2_000)).toEqual(
        ok(""),
      );
      const next = changed(second, "app-072", "t-back");
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
            error: { reason: "rejected", message: `'set map ${maps.overlay}': entry not found.` },
          },
          commands: [
            "add map credentials-overlay app-072",
            `set map routing-overlay app-072 I|app-072|127.0.0.1|${port()}|c`,
          ],
          holds: false,
        },
        // Both hosts get the map's entry beneath, the first Snapshot's; the REVISION is the second's.
        between: { held: ok(21), answers: ["app-072", "app-072"] },
        // Whole: every map, the credentials too.
        repaired: { result: ok(undefined), holds: true, commands: ALL },
        after: ["app-072", "app-072"],
      });
    });

    it("answers not-synced for an entry found while the overlay holds no REVISION (a whole push half way after a restart)", async () => {
      const target = targetOf();
      await pushed(target, everyAppReady(40));
      // The map committed, its overlay not yet: what a request sees between the two commits.
      expect(await runtimeCommand(proxy.socket, `del map ${maps.overlay} REVISION`, 2_000)).toEqual(
        ok(""),
      );
      const between = await Promise.all(["app-1.example.com", "x.w1.example.com"].map(answerFor));
      const after = await pushed(target, everyAppReady(41));
      expect({ between, after: after.holds }).toEqual({
        between: ["not-synced", "not-synced"],
        after: true,
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
  },
);
