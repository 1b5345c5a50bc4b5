// The route answer for one Snapshot, as both carriers write it: pure in what it answers, with one
// answer kept per App and Snapshot (the data plane asks for the same Apps over and over).

import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER, routeAnswerer } from "../../src/answers/route-answer.ts";
import { snapshotOf } from "../support/world.ts";

const host = (name: string) => ["Host", name];
const secrets = { "shop-credentials": { token: "s" }, "blog-credentials": { token: "b" } };
const apps = (shopUpstream: string) => [
  { name: "shop", hostnames: ["shop.example.com"], upstream: shopUpstream },
  { name: "blog", hostnames: ["blog.example.com"] },
];

describe("routeAnswerer", () => {
  it("answers every request to an App of one Snapshot alike, and each new Snapshot anew", () => {
    const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
    const first = snapshotOf(apps("http://shop:8080"), secrets, 1);
    const second = snapshotOf(apps("http://shop:9090"), secrets, 2);
    const seen = [
      answer(first, host("shop.example.com")),
      answer(first, host("SHOP.example.com.")),
      answer(first, host("blog.example.com")),
      answer(second, host("shop.example.com")),
      answer(first, host("shop.example.com")),
    ];
    const shop1 = {
      outcome: "routed",
      status: 200,
      headers: {
        "x-mirror-app": "shop",
        "x-mirror-upstream": "http://shop:8080",
        "x-mirror-revision": "1",
        "content-length": "0",
      },
    };
    expect(seen).toEqual([
      shop1,
      shop1,
      {
        outcome: "routed",
        status: 200,
        headers: { "x-mirror-app": "blog", "x-mirror-revision": "1", "content-length": "0" },
      },
      {
        outcome: "routed",
        status: 200,
        headers: {
          "x-mirror-app": "shop",
          "x-mirror-upstream": "http://shop:9090",
          "x-mirror-revision": "2",
          "content-length": "0",
        },
      },
      shop1,
    ]);
    expect(seen[1]).toBe(seen[0]);
    expect(Object.isFrozen(seen[0]!.headers)).toBe(true);
  });
});
