// The routing contract through a real data plane: one suite that every data-plane test runs,
// with what that data plane shows the client for each sidecar answer. The README's data-plane
// table is this mapping.

import { beforeAll, describe, expect, it } from "vitest";
import { type ClientAnswer, through, throughWithHeaders } from "../support/data-plane.ts";
import { type Echoed, sha256 } from "../support/echo-upstream.ts";
import { planeInFront, type ShippedPlane } from "../support/plane-in-front.ts";
import { HOSTS, type RoutingWorld } from "../support/routing-world.ts";
import { waitUntil } from "../support/wait.ts";
import { type CredentialAnswers, credentialCases } from "./contract-credentials.ts";
import { echoedOf, genuineMirror, type MirrorHeader, trustCases } from "./contract-trust.ts";

/** What the client sees through this data plane for each answer of the sidecar but 200. */
export interface ClientAnswers {
  readonly secretUnavailable: ClientAnswer;
  readonly notSynced: ClientAnswer;
  readonly unknownHost: ClientAnswer;
  readonly badHost: ClientAnswer;
  /** No sidecar listening at all. */
  readonly sidecarDown: ClientAnswer;
}

/** What the client sees in hop mode: the contract's answers and the credential refusals. */
type HopAnswers = ClientAnswers & CredentialAnswers;

/**
 * Each sidecar answer mapped to its own status with `x-mirror-reason`, `retry-after` and a short
 * text (ending in `newline`), as nginx.conf and haproxy.cfg do; `sidecarDown` is the status of
 * the answer given when the sidecar is not there.
 */
export function mappedAnswers(newline: string, sidecarDown: number): HopAnswers {
  const answer = (status: number, reason: string | null, retryAfter: string | null, text: string) =>
    ({ status, reason, retryAfter, body: `${text}${newline}` }) satisfies ClientAnswer;
  return {
    secretUnavailable: answer(503, "secret-unavailable", "5", "credentials not available yet"),
    secretUnusable: answer(503, "secret-unusable", "5", "credentials not usable"),
    credentialsOff: answer(503, "credentials-off", null, "credentials not served"),
    notSynced: answer(503, "not-synced", "1", "routing table not synced yet"),
    unknownHost: answer(404, "unknown-host", null, "unknown host"),
    badHost: answer(400, "bad-host", null, "bad host"),
    sidecarDown: answer(sidecarDown, null, null, "routing sidecar unreachable"),
  };
}

/** A data plane under the contract: `shippedPlane(kind)` for one run as it ships. */
interface DataPlaneSpec extends ShippedPlane {
  /** For the suite's title: "nginx auth_request". */
  readonly name: string;
  readonly answers: HopAnswers;
  /** The `x-mirror-*` headers it sets on a routed request to the upstream (lower-case). */
  readonly upstreamHeaders: readonly MirrorHeader[];
}

// Larger than every data plane's in-memory body buffer, and not text.
const BODY = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 31 + 7) % 256);

/** What both modes' suites share: the data plane's port, the world, and the answers. */
export interface ContractContext {
  ask(request: Parameters<typeof through>[1]): Promise<ClientAnswer>;
  world(): RoutingWorld;
  readonly answers: ClientAnswers;
  readonly upstreamHeaders: readonly MirrorHeader[];
}

/** The answers every data plane gives the same way whether it hops to the sidecar or not. */
export function contractCases(c: ContractContext): void {
  it("proxies a ready App's request to its upstream with the App's headers, not the client's", async () => {
    const answer = await c.ask({
      host: HOSTS.ready,
      headers: { "x-mirror-app": "forged", "x-mirror-upstream": "http://127.0.0.1:9" },
    });
    expect({ status: answer.status, reason: answer.reason, echoed: echoedOf(answer) }).toEqual({
      status: 200,
      reason: null,
      echoed: echo(c, "GET", "/orders/42", new Uint8Array()),
    });
  });

  it("passes a POST body through to the upstream untouched", async () => {
    const answer = await c.ask({ host: HOSTS.ready, method: "POST", path: "/upload", body: BODY });
    expect({ status: answer.status, echoed: echoedOf(answer) }).toEqual({
      status: 200,
      echoed: echo(c, "POST", "/upload", BODY),
    });
  });

  it("routes a host under a wildcard to its App", async () => {
    const answer = await c.ask({ host: HOSTS.wildcard, path: "/" });
    expect({ status: answer.status, echoed: echoedOf(answer) }).toMatchObject({
      status: 200,
      echoed: { app: "edge", host: HOSTS.wildcard },
    });
  });

  it("answers secret-unavailable for an App whose Secret is absent", async () => {
    expect(await c.ask({ host: HOSTS.secretMissing })).toEqual(c.answers.secretUnavailable);
  });

  it("answers unknown-host for a host no App has", async () => {
    expect(await c.ask({ host: HOSTS.unknown })).toEqual(c.answers.unknownHost);
  });

  it("answers unknown-host when the client names a served host only in X-Forwarded-Host", async () => {
    const forged = { host: HOSTS.unknown, headers: { "x-forwarded-host": HOSTS.ready } };
    expect(await c.ask(forged)).toEqual(c.answers.unknownHost);
  });

  it("answers bad-host for a host the sidecar refuses", async () => {
    expect(await c.ask({ host: HOSTS.bad })).toEqual(c.answers.badHost);
  });

  it("follows the Secret: once it is created the App is served", async () => {
    expect((await c.ask({ host: HOSTS.later })).status).toBe(503);
    c.world().createLaterSecret();
    const answer = await waitUntil(
      async () => {
        const a = await c.ask({ host: HOSTS.later, path: "/" });
        return a.status === 200 && a;
      },
      { timeoutMs: 5_000, intervalMs: 20, what: "news.example.com to be served" },
    );
    expect(echoedOf(answer)).toMatchObject({ app: "news" });
  });

  it("keeps routing from the last good Registry when the new one is refused", async () => {
    c.world().writeRefusedRegistry();
    // Long enough for the sidecar to see it, and a proxy to get a table if it got one.
    await new Promise((r) => setTimeout(r, 500));
    try {
      expect(echoedOf(await c.ask({ host: HOSTS.ready }))).toMatchObject({ app: "shop" });
    } finally {
      await c.world().restoreRegistry();
    }
  });

  trustCases(c);

  it("keeps routing while the API server is gone", async () => {
    const back = c.world().apiServerGone(1_500);
    await new Promise((r) => setTimeout(r, 200));
    expect(echoedOf(await c.ask({ host: HOSTS.ready }))).toMatchObject({ app: "shop" });
    await back;
  });
}

/** Runs the contract through `spec`'s data plane; skipped, saying why, when it is not installed. */
export function describeDataPlane(spec: DataPlaneSpec): void {
  const title = `${spec.name} in front of the sidecar and envtest`;
  const binary = spec.binary.path;
  if (binary === undefined) {
    // Skipped only where the data plane is not installed; .ci/run installs nginx, caddy and
    // haproxy, so CI always runs it.
    describe(title, () => {
      it.skipIf(binary === undefined)(
        `runs the routing contract (${spec.binary.missing})`,
        () => {},
      );
    });
    return;
  }

  describe(title, () => {
    const s = planeInFront(async (world, at) => ({
      plane: await spec.start(binary, { ...at, sidecarPort: world.sidecarPort }),
    }));

    const context = {
      ask: (r: Parameters<typeof through>[1]) => through(s.port, r),
      world: () => s.world,
      answers: spec.answers,
      upstreamHeaders: spec.upstreamHeaders,
    };
    contractCases(context);
    // Its last case leaves a sidecar without --serve-credentials for the suites below.
    credentialCases({
      ...context,
      credentialAnswers: spec.answers,
      exchange: (r) => throughWithHeaders(s.port, r),
    });

    // The two suites below replace the sidecar under the running data plane; they run after the
    // tests above, in order.
    describe("with a sidecar that has not synced", () => {
      beforeAll(() => s.world.replaceWithUnsynced(), 30_000);

      it("answers not-synced", async () => {
        expect(await through(s.port, { host: HOSTS.ready })).toEqual(spec.answers.notSynced);
      });
    });

    describe("with the sidecar stopped", () => {
      beforeAll(() => s.world.stopSidecar(), 30_000);

      it("answers a 5xx that says the sidecar is unreachable, never a 2xx", async () => {
        const answer = await through(s.port, { host: HOSTS.ready });
        expect(answer).toEqual(spec.answers.sidecarDown);
        expect(answer.status).toBeGreaterThanOrEqual(500);
      });
    });
  });
}

function echo(c: ContractContext, method: string, path: string, body: Uint8Array): Echoed {
  return {
    method,
    host: HOSTS.ready,
    app: "shop",
    mirror: genuineMirror(c, "shop"),
    authorization: [],
    path,
    bodyBytes: body.length,
    bodySha256: sha256(body),
  };
}
