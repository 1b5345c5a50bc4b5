// /v1/route for Apps with a credential (ADR 53), over a real socket: the routed answer carries
// the credential, exactly; the two refusals say why; and a request a data plane routed (it
// carries x-mirror-app) is refused whatever it asks, so an upstream that resolves to the pod
// cannot read any App's credential through the proxy.

import { afterEach, describe, expect, it } from "vitest";
import type { RouteOutcome } from "../../src/answers/reasons.ts";
import { build } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import {
  answer,
  refused,
  routed,
  routeRequest,
  startRouteServer,
} from "../support/route-answers.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";

const MARKER = "MARKER-a9f3c1d27e";
const apps = [
  {
    name: "vault",
    hostnames: ["vault.example.com"],
    upstream: "http://vault.svc",
    credential: { prefix: "Bearer " },
  },
  { name: "raw", hostnames: ["raw.example.com"], credential: {} },
  { name: "bent", hostnames: ["bent.example.com"], credential: { prefix: "Key " } },
  { name: "shop", hostnames: ["shop.example.com"] },
];

function snapshotWith(serveCredentials: boolean): Snapshot {
  const secrets = secretsOf([
    ["apps/vault-credentials", secretData({ token: `${MARKER}\n` })],
    ["apps/raw-credentials", secretData({ token: "tok\tmore" })],
    ["apps/bent-credentials", secretData({ token: "line\r\nbreak" })],
    ["apps/shop-credentials", secretData({ token: "s" })],
  ]);
  return build(registryOf(apps), secrets, { ...meta(3), serveCredentials });
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serve(snapshot: Snapshot) {
  const outcomes: RouteOutcome[] = [];
  const server = await startRouteServer({ view: () => snapshot, counted: (o) => outcomes.push(o) });
  open.push(server);
  return { server, outcomes };
}

const withApp = (status: number, reason: string, app: string, retryAfter: boolean) => ({
  status,
  headers: {
    ...(retryAfter ? { "retry-after": "5" } : {}),
    "x-mirror-reason": reason,
    "x-mirror-app": app,
    "content-length": "0",
  },
  body: "",
});

describe("/v1/route for Apps with a credential", () => {
  it("hands each served App its credential, says why of the others, and counts each outcome", async () => {
    const { server, outcomes } = await serve(snapshotWith(true));
    const hosts = ["vault.example.com", "raw.example.com", "bent.example.com", "shop.example.com"];
    const answers = [];
    for (const host of hosts) answers.push(await answer(server, routeRequest(host)));
    const withCredential = (a: ReturnType<typeof routed>, credential: string) => ({
      ...a,
      headers: { ...a.headers, "x-mirror-credential": credential },
    });
    expect(answers).toEqual([
      withCredential(routed("vault", 3, "http://vault.svc"), `Bearer ${MARKER}`),
      withCredential(routed("raw", 3), "tok\tmore"),
      withApp(503, "secret-unusable", "bent", true),
      routed("shop", 3),
    ]);
    expect(outcomes).toEqual(["routed", "routed", "secret-unusable", "routed"]);
  });

  it("answers credentials-off, without retry-after, for every App with one when the flag is off", async () => {
    const { server, outcomes } = await serve(snapshotWith(false));
    const answers = [];
    for (const host of ["vault.example.com", "bent.example.com", "shop.example.com"])
      answers.push(await answer(server, routeRequest(host)));
    expect(answers).toEqual([
      withApp(503, "credentials-off", "vault", false),
      withApp(503, "credentials-off", "bent", false),
      routed("shop", 3),
    ]);
    expect(outcomes).toEqual(["credentials-off", "credentials-off", "routed"]);
  });

  it("refuses 403 routed-request for any request that carries x-mirror-app, whatever its case, value or host", async () => {
    const { server, outcomes } = await serve(snapshotWith(true));
    const requests = [
      routeRequest("vault.example.com", { "x-mirror-app": "evil" }),
      routeRequest("shop.example.com", { "X-MIRROR-APP": "" }),
      routeRequest("evil.example.com", {
        "x-forwarded-host": "vault.example.com",
        "X-Mirror-App": "evil",
      }),
      routeRequest(["vault.example.com", "vault.example.com"], { "x-mirror-app": "evil" }),
      { url: "http://vault.example.com/v1/route", headers: { "x-mirror-app": "evil" } },
    ];
    const answers = [];
    for (const r of requests) answers.push(await answer(server, r));
    expect(answers).toEqual(requests.map(() => refused(403, "routed-request")));
    expect(outcomes).toEqual(requests.map(() => "routed-request"));
    // Names that only look alike are not the data plane's.
    const alike = await answer(
      server,
      routeRequest("vault.example.com", { "x-mirror-apps": "x", "x-mirror-ap": "y" }),
    );
    expect(alike.status).toBe(200);
  });
});
