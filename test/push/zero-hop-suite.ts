// The routing contract through a real proxy in zero-hop mode: the proxy answers from the table a
// pusher put into it, and must answer exactly as `/v1/route` would have. One suite, run by each
// proxy's test file with its own way of starting the proxy and its answers.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER, routeAnswerer } from "../../src/answers/route-answer.ts";
import { systemClock } from "../../src/clock.ts";
import { silentPushObserver } from "../../src/push/observer.ts";
import { type Pusher, startPusher } from "../../src/push/pusher.ts";
import { ok } from "../../src/result.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { sha256 } from "../support/echo-upstream.ts";
import { release } from "../support/release.ts";
import type { Tool } from "../support/tools.ts";
import { waitUntil } from "../support/wait.ts";
import { snapshotOf } from "../support/world.ts";
import {
  ask,
  type EchoUpstreams,
  exchange,
  expectedAnswer,
  type RefusedAnswers,
  startEchoUpstreams,
  type ZeroHopAnswer,
  type ZeroHopRequest,
} from "../support/zero-hop.ts";
import type { ZeroHopProxy } from "../support/zero-hop-proxies.ts";
import { changeCases } from "./zero-hop-changes.ts";
import type { ZeroHopContext } from "./zero-hop-context.ts";
import { credentialCases } from "./zero-hop-credentials.ts";
import { trustCases } from "./zero-hop-trust.ts";
import { BODY, contractWorld, READY, secretsFor } from "./zero-hop-world.ts";

export interface ZeroHopSpec {
  /** For the suite's title. */
  readonly name: string;
  readonly binary: Tool;
  start(binary: string, dir: string): Promise<ZeroHopProxy>;
  readonly answers: RefusedAnswers;
  /**
   * The answer of the proxy's own HTTP parser to a Host it refuses before any configuration
   * runs (the same in hop mode), or null when it lets the configuration answer.
   */
  readonly parserRefuses?: (host: string) => ZeroHopAnswer | null;
  /** The `x-mirror-*` headers of a routed answer the proxy sends its upstream; all by default. */
  readonly upstreamHeaders?: readonly string[];
  /** Property runs: each is one push and up to 15 requests. */
  readonly runs?: number;
  /**
   * Per property run, the Snapshots after the first, each up to 3 Secret changes rebuilt one
   * after another and pushed once: 1 by default, more for a proxy that pushes such changes
   * entry by entry onto what it holds (HAProxy, ADR 58).
   */
  readonly changeSteps?: number;
}

/** Runs the zero-hop contract through `spec`'s proxy; skipped, saying why, when it is not installed. */
export function describeZeroHop(spec: ZeroHopSpec): void {
  const title = `${spec.name} in zero-hop mode`;
  const binary = spec.binary.path;
  if (binary === undefined) {
    describe(title, () => {
      // Skipped only where the proxy binary is not installed (the title says which); CI installs
      // it (.ci/run), so there it runs.
      it.skip(`runs the zero-hop contract (${spec.binary.missing})`, () => {});
    });
    return;
  }

  describe(title, () => {
    let dir: string;
    let upstreams: EchoUpstreams;
    let proxy: ZeroHopProxy;
    let pusher: Pusher;
    let revision = 0;
    const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
    const through = (request: ZeroHopRequest) => ask(proxy.port, request);

    /** Publishes a Snapshot and waits until the proxy holds it. */
    async function pushed(snapshot: Snapshot): Promise<void> {
      pusher.publish(snapshot);
      await waitUntil(() => pusher.held() === snapshot.revision, {
        timeoutMs: 10_000,
        what: `${spec.name} to hold revision ${snapshot.revision}\n${proxy.log()}`,
      });
      // What the proxy holds, entry by entry, is what was pushed (ADR 51): no false alarm.
      expect(await proxy.target.heldDigest()).toEqual(ok(proxy.target.digestOf(snapshot)));
    }

    /** What the client must see for `request`, from `/v1/route`'s answer over `snapshot`. */
    function expectedFor(snapshot: Snapshot | null, request: ZeroHopRequest): ZeroHopAnswer {
      // The proxy's HTTP parser drops the spaces around a header value, as Node's does.
      const value = (request.host ?? "").replace(/^[ \t]+|[ \t]+$/g, "");
      const refused = spec.parserRefuses?.(value) ?? null;
      if (refused !== null) return refused;
      const authorization = Object.entries(request.headers ?? {}).find(
        ([name]) => name.toLowerCase() === "authorization",
      )?.[1];
      return expectedAnswer(
        answer(snapshot, ["Host", value]),
        {
          host: value,
          path: request.path ?? "/orders/42",
          ...(authorization === undefined ? {} : { authorization }),
        },
        upstreams.urls,
        spec.answers,
        spec.upstreamHeaders,
      );
    }
    const expected = (snapshot: Snapshot | null, host: string, path?: string) =>
      expectedFor(snapshot, { host, ...(path === undefined ? {} : { path }) });
    const context: ZeroHopContext = {
      name: spec.name,
      answers: spec.answers,
      runs: spec.runs ?? 40,
      changeSteps: spec.changeSteps ?? 1,
      urls: () => upstreams.urls,
      proxy: () => proxy,
      nextRevision: () => ++revision,
      pushed,
      through,
      exchange: (request) => exchange(proxy.port, request),
      expected: expectedFor,
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "replica-mirror-zero-hop-"));
      upstreams = await startEchoUpstreams(2);
      proxy = await spec.start(binary, dir);
      pusher = startPusher({
        target: proxy.target,
        clock: systemClock,
        observer: silentPushObserver,
      });
    }, 30_000);

    afterAll(() => release(pusher, proxy, upstreams, dir));

    it("answers not-synced before the first push", async () => {
      expect(await through({ host: "shop.example.com" })).toEqual(spec.answers.notSynced);
    });

    describe("with the contract's table pushed", () => {
      let snapshot: Snapshot;
      beforeAll(async () => {
        revision++;
        snapshot = snapshotOf(contractWorld(upstreams.urls), secretsFor(READY), revision);
        await pushed(snapshot);
      }, 30_000);

      it("proxies a ready App's request to its upstream with the App's headers, not the client's", async () => {
        const forged = {
          "x-mirror-app": "forged",
          "x-mirror-upstream": "http://127.0.0.1:9",
          "x-mirror-revision": "999",
          "X-Mirror-Other": "forged",
        };
        const got = await through({ host: "shop.example.com", headers: forged });
        expect(got).toEqual(expected(snapshot, "shop.example.com"));
      });

      it("passes a POST body through to the upstream untouched", async () => {
        const got = await through({
          host: "shop.example.com",
          method: "POST",
          path: "/upload",
          body: BODY,
        });
        expect({ status: got.status, echoed: got.echoed }).toEqual({
          status: 200,
          echoed: {
            ...expected(snapshot, "shop.example.com", "/upload").echoed!,
            method: "POST",
            bodyBytes: BODY.length,
            bodySha256: sha256(BODY),
          },
        });
      });

      it("answers secret-unavailable, unknown-host and bad-host as the contract says", async () => {
        const hosts = [
          "blog.example.com",
          "nope.example.org",
          "example.com",
          "[::1]",
          "shop.example.com:x",
          "",
        ];
        const got = await Promise.all(hosts.map((host) => through({ host })));
        const { unknownHost, badHost } = spec.answers;
        const secretUnavailable = { ...spec.answers.secretUnavailable, app: "blog" };
        const answers = [secretUnavailable, unknownHost, unknownHost, badHost, badHost, badHost];
        // An empty Host is refused by some proxies' own HTTP parsers, as in hop mode.
        expect(got).toEqual(answers.map((a, i) => spec.parserRefuses?.(hosts[i]!) ?? a));
      });

      it("routes by the request's own Host: X-Forwarded-Host chooses nothing", async () => {
        const got = await through({
          host: "nope.example.org",
          headers: { "x-forwarded-host": "shop.example.com" },
        });
        expect(got).toEqual(spec.answers.unknownHost);
      });

      it("matches wildcards at any depth, the longest suffix first, never the bare suffix", async () => {
        const hosts = [
          "x.shop.example.com",
          "a.b.c.shop.example.com",
          "y.example.com",
          "x.a.example.com",
          "a.example.com",
          "z.y.x.a.example.com",
        ];
        const got = await Promise.all(hosts.map((host) => through({ host })));
        expect(got.map((a) => a.echoed?.mirror["x-mirror-app"] ?? a.reason)).toEqual([
          "shop",
          "shop",
          "wide",
          "deep",
          "wide",
          "deep",
        ]);
        expect(got).toEqual(hosts.map((h) => expected(snapshot, h)));
      });

      it("matches a wildcard under the most labels a name can have, and refuses a longer name", async () => {
        // 127 labels in 253 characters: the last step of a label-by-label walk.
        const hosts = [
          `${"a.".repeat(125)}z.z`,
          `${"a.".repeat(125)}z.z.`,
          `${"a.".repeat(126)}z.z`,
        ];
        const got = await Promise.all(hosts.map((host) => through({ host })));
        expect(got.map((a) => a.echoed?.mirror["x-mirror-app"] ?? a.reason)).toEqual([
          "last",
          "last",
          "bad-host",
        ]);
        expect(got).toEqual(hosts.map((h) => expected(snapshot, h)));
      });

      it("ignores case, one trailing dot and a port, and passes the Host on as the client sent it", async () => {
        const hosts = [
          "SHOP.Example.COM",
          "shop.example.com.",
          "shop.example.com:8080",
          "X.Shop.Example.Com.:80",
        ];
        const got = await Promise.all(hosts.map((host) => through({ host })));
        expect(got).toEqual(hosts.map((h) => expected(snapshot, h)));
      });

      it("serves a conflicting hostname from the App whose name sorts first", async () => {
        const got = await through({ host: "both.example.com" });
        expect(got.echoed?.mirror["x-mirror-app"]).toBe("alpha");
        expect(got).toEqual(expected(snapshot, "both.example.com"));
      });

      it("refuses to route an App whose upstream is not http://host[:port]", async () => {
        expect(await through({ host: "bare.example.com" })).toEqual(spec.answers.noHttpUpstream);
      });

      trustCases({
        through,
        expected: (host, path) => expected(snapshot, host, path),
        badHost: (host) => spec.parserRefuses?.(host) ?? spec.answers.badHost,
      });
    });

    changeCases(context);

    credentialCases(context);
  });
}
