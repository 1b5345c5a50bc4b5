import { afterEach, describe, expect, it } from "vitest";
import type { RouteOutcome } from "../../src/answers/reasons.ts";
import type { RetryAfterSeconds } from "../../src/answers/route-answer.ts";
import { SnapshotHolder } from "../../src/snapshot/holder.ts";
import type { RouteView } from "../../src/snapshot/types.ts";
import {
  answer,
  notSynced,
  refused,
  routed,
  routeRequest,
  secretUnavailable,
  startRouteServer,
} from "../support/route-answers.ts";
import { registryStatus, snapshotOf } from "../support/world.ts";

const SHOP = {
  name: "shop",
  hostnames: ["shop.example.com", "*.shop.example.com"],
  upstream: "http://shop.tenant-a.svc:8080",
};
const BLOG = { name: "blog", hostnames: ["blog.example.com"] };

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** The data listener's server on a real socket, answering from a holder. */
async function serve(view: () => RouteView | null, retryAfter?: RetryAfterSeconds) {
  const outcomes: RouteOutcome[] = [];
  const server = await startRouteServer({
    view,
    counted: (o) => outcomes.push(o),
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
  open.push(server);
  return { app: server, outcomes };
}

async function serverWith(...snapshots: ReturnType<typeof snapshotOf>[]) {
  const holder = new SnapshotHolder();
  for (const s of snapshots) holder.swap(s);
  return { ...(await serve(() => holder.current())), holder };
}

describe("/v1/route, docs/serving.md row by row", () => {
  it("answers 503 not-synced with retry-after before the first Snapshot", async () => {
    const { app } = await serverWith();
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(notSynced);
  });

  it("answers 404 unknown-host for every host while the Registry Secret is absent", async () => {
    const absent = {
      present: false,
      resourceVersion: null,
      error: null,
      refusedApps: [],
      contentHash: null,
    };
    const { app } = await serverWith(snapshotOf(null, {}, 1, absent));
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(
      refused(404, "unknown-host"),
    );
  });

  it("keeps routing from the last good Registry when the new one is malformed", async () => {
    const rejected = registryStatus("9", "apps[0].name: required");
    const { app } = await serverWith(
      snapshotOf([SHOP], { "shop-credentials": { token: "t" } }, 4, rejected),
    );
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(
      routed("shop", 4, SHOP.upstream),
    );
  });

  it.each([
    ["the Secret is absent", {}],
    ["the key is missing", { "shop-credentials": { other: "t" } }],
    ["the value is empty", { "shop-credentials": { token: "" } }],
  ])("answers 503 secret-unavailable with the App when %s", async (_case, secrets) => {
    const { app } = await serverWith(snapshotOf([SHOP], secrets));
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(secretUnavailable("shop"));
  });

  it("answers 200 with app, upstream and revision when the Secret has a value", async () => {
    const { app } = await serverWith(
      snapshotOf([SHOP], { "shop-credentials": { token: "t" } }, 12),
    );
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(
      routed("shop", 12, SHOP.upstream),
    );
  });

  it("leaves x-mirror-upstream out when the App has none", async () => {
    const { app } = await serverWith(snapshotOf([BLOG], { "blog-credentials": { token: "t" } }));
    expect(await answer(app, routeRequest("blog.example.com"))).toEqual(routed("blog", 1));
  });

  it("answers 404 unknown-host for a host no App serves", async () => {
    const { app } = await serverWith(snapshotOf([SHOP], { "shop-credentials": { token: "t" } }));
    expect(await answer(app, routeRequest("shop.example.org"))).toEqual(
      refused(404, "unknown-host"),
    );
    // A wildcard never matches its bare suffix.
    expect(await answer(app, routeRequest("example.com"))).toEqual(refused(404, "unknown-host"));
  });

  it.each([
    ["an IPv6 literal", "[::1]:8080"],
    ["an IPv4 address with a bad port", "10.0.0.1:http"],
    ["a name with an empty label", "shop..example.com"],
    ["a name with a space", "shop example.com"],
    ["a 10 KB name", "a".repeat(10_240)],
    ["a non-ASCII name", "bücher.example.com"],
    ["an IPv4 address", "10.0.0.12:8000"],
    ["an IPv4 address with a trailing dot", "10.0.0.12."],
    ["a short IPv4 spelling", "127.1"],
    ["a decimal IPv4 spelling", "2130706433"],
    ["a hex IPv4 spelling", "0x7F.1"],
    ["a name whose last label is a number", "shop.example.0x1f"],
  ])("answers 400 bad-host for %s", async (_case, host) => {
    const { app } = await serverWith(snapshotOf([SHOP], { "shop-credentials": { token: "t" } }));
    expect(await answer(app, routeRequest(host))).toEqual(refused(400, "bad-host"));
  });

  it("flips to 503 and back to 200 when the Secret is deleted and recreated", async () => {
    const { app, holder } = await serverWith(
      snapshotOf([SHOP], { "shop-credentials": { token: "a" } }, 1),
    );
    expect((await answer(app, routeRequest("shop.example.com"))).status).toBe(200);
    holder.swap(snapshotOf([SHOP], {}, 2));
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(secretUnavailable("shop"));
    holder.swap(snapshotOf([SHOP], { "shop-credentials": { token: "b" } }, 3));
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(
      routed("shop", 3, SHOP.upstream),
    );
  });
});

describe("/v1/route, the request side", () => {
  const ready = () => snapshotOf([SHOP, BLOG], { "shop-credentials": { token: "t" } }, 5);
  const shop = routed("shop", 5, SHOP.upstream);

  it("matches wildcards, ignores the port, case and one trailing dot", async () => {
    const { app } = await serverWith(ready());
    for (const host of ["a.b.shop.example.com", "SHOP.example.com:443", "shop.example.com."]) {
      expect(await answer(app, routeRequest(host))).toEqual(shop);
    }
  });

  it("takes X-Forwarded-Host over Host, first value of a list, trimmed", async () => {
    const { app } = await serverWith(ready());
    const forwarded = { "x-forwarded-host": " shop.example.com , blog.example.com" };
    expect(await answer(app, routeRequest("blog.example.com", forwarded))).toEqual(shop);
  });

  it("answers 400 for an empty X-Forwarded-Host rather than falling back to Host", async () => {
    const { app } = await serverWith(ready());
    for (const xfh of ["", " ", ", shop.example.com"]) {
      expect(
        await answer(app, routeRequest("shop.example.com", { "x-forwarded-host": xfh })),
      ).toEqual(refused(400, "bad-host"));
    }
  });

  it("takes an absolute-form target's authority over Host, and X-Forwarded-Host over both", async () => {
    const { app } = await serverWith(ready());
    const absolute = (url: string, headers: Record<string, string | string[]>) =>
      answer(app, { url, headers });
    expect([
      await absolute("http://shop.example.com/v1/route", { host: "blog.example.com" }),
      await absolute("http://SHOP.example.com:8000/v1/route/a?b", {}),
      await absolute("https://x.shop.example.com/v1/route", { host: "nope.example.com" }),
      await absolute("http://shop.example.com/v1/route", {
        host: "shop.example.com",
        "x-forwarded-host": "blog.example.com",
      }),
      await absolute("http://nope.example.com/v1/route", { host: "shop.example.com" }),
      await absolute("http://10.0.0.12/v1/route", { host: "shop.example.com" }),
      await absolute("http://user@shop.example.com/v1/route", { host: "shop.example.com" }),
      await absolute("http://shop.example.com/v1/route", {
        host: ["shop.example.com", "shop.example.com"],
      }),
      await absolute("http://shop.example.com/v1/apps", { host: "shop.example.com" }),
    ]).toEqual([
      shop,
      shop,
      shop,
      secretUnavailable("blog"),
      refused(404, "unknown-host"),
      refused(400, "bad-host"),
      refused(400, "bad-host"),
      refused(400, "bad-host"),
      refused(404, "not-found"),
    ]);
  });

  it("answers 400 for two Host headers, even when both name the same App", async () => {
    const { app } = await serverWith(ready());
    expect(await answer(app, routeRequest(["shop.example.com", "shop.example.com"]))).toEqual(
      refused(400, "bad-host"),
    );
  });

  it.each(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] as const)(
    "answers %s like GET",
    async (method) => {
      const { app } = await serverWith(ready());
      expect(await answer(app, routeRequest("shop.example.com", {}, method))).toEqual(shop);
    },
  );

  it("answers HEAD with the same status and headers and no content-length", async () => {
    const { app } = await serverWith(ready());
    const { "content-length": _, ...headers } = shop.headers;
    expect(await answer(app, routeRequest("shop.example.com", {}, "HEAD"))).toEqual({
      ...shop,
      headers,
    });
  });

  it("answers a POST with a body, whatever its content type, without reading it", async () => {
    const { app } = await serverWith(ready());
    for (const contentType of ["application/json", "text/plain", "not a media type", undefined]) {
      const headers: Record<string, string> =
        contentType === undefined ? {} : { "content-type": contentType };
      const r = await answer(app, {
        ...routeRequest("shop.example.com", headers, "POST"),
        payload: "{ this is not json",
      });
      expect(r).toEqual(shop);
    }
  });

  it("serves every path under /v1/route/, query and undecodable escapes included", async () => {
    const { app } = await serverWith(ready());
    for (const url of ["/v1/route/", "/v1/route/a/b?c=d", "/v1/route?x=%zz", "/v1/route/%zz"]) {
      expect(await answer(app, { url, headers: { host: "shop.example.com" } })).toEqual(shop);
    }
  });

  it("percent-encodes an upstream that is not a valid header value", async () => {
    const odd = { ...SHOP, upstream: "http://shop:8080/\r\nx-injected: 1/é" };
    const { app } = await serverWith(snapshotOf([odd], { "shop-credentials": { token: "t" } }));
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(
      routed("shop", 1, "http://shop:8080/%0D%0Ax-injected:%201/%C3%A9"),
    );
  });

  it("uses the configured retry-after values", async () => {
    const holder = new SnapshotHolder();
    const { app } = await serve(() => holder.current(), { notSynced: 2, secretUnavailable: 30 });
    expect((await answer(app, routeRequest("shop.example.com"))).headers["retry-after"]).toBe("2");
    holder.swap(snapshotOf([SHOP]));
    expect(await answer(app, routeRequest("shop.example.com"))).toEqual(
      secretUnavailable("shop", "30"),
    );
  });

  it("reads the holder exactly once per request, whatever the answer", async () => {
    const holder = new SnapshotHolder();
    holder.swap(ready());
    let reads = 0;
    const { app } = await serve(() => {
      reads++;
      return holder.current();
    });
    const hosts = ["shop.example.com", "blog.example.com", "nope.example.com", "[::1]"];
    for (const host of hosts) await answer(app, routeRequest(host));
    await answer(app, { url: "/v1/route/%zz", headers: { host: "shop.example.com" } });
    expect(reads).toBe(hosts.length + 1);
  });

  it("counts each answer once, by outcome", async () => {
    const { app, holder, outcomes } = await serverWith();
    await answer(app, routeRequest("shop.example.com"));
    holder.swap(ready());
    for (const host of ["shop.example.com", "blog.example.com", "nope.example.com", "[::1]"]) {
      await answer(app, routeRequest(host));
    }
    expect(outcomes).toEqual([
      "not-synced",
      "routed",
      "secret-unavailable",
      "unknown-host",
      "bad-host",
    ]);
  });
});
