// What a client must not be able to do through a zero-hop proxy: tell the upstream anything in
// an `X-Mirror-*` header, however many headers come first; reach an App through a Host that is
// an IP literal; route by `Host` when an absolute-form target names another authority (RFC 9112
// §3.2.2). Run by the zero-hop suite with the contract's table pushed.

import { expect, it } from "vitest";
import { FORGED_MIRROR_HEADERS, paddingHeaders } from "../support/forged-headers.ts";
import type { ZeroHopAnswer, ZeroHopRequest } from "../support/zero-hop.ts";

interface TrustContext {
  through(request: ZeroHopRequest): Promise<ZeroHopAnswer>;
  /** What the client must see for `host` from the pushed table (`/v1/route`'s answer). */
  expected(host: string, path?: string): ZeroHopAnswer;
  /** The proxy's bad-host answer for `host` (its own parser's, where it refuses first). */
  badHost(host: string): ZeroHopAnswer;
}

export function trustCases(c: TrustContext): void {
  it("strips every client X-Mirror-* header after 120 other lines, or refuses the request", async () => {
    const got = await c.through({
      host: "shop.example.com",
      headers: { ...paddingHeaders(120), ...FORGED_MIRROR_HEADERS },
    });
    // HAProxy takes at most 101 header lines (tune.http.maxhdr) and answers 400 past them.
    if (got.status === 400) expect(got.echoed).toBeNull();
    else expect(got).toEqual(c.expected("shop.example.com"));
  });

  it("strips X-Mirror-* headers that come before others, and keeps the others", async () => {
    const got = await c.through({
      host: "shop.example.com",
      headers: { ...FORGED_MIRROR_HEADERS, ...paddingHeaders(30), "X-Mirror-Last": "forged" },
    });
    expect(got).toEqual(c.expected("shop.example.com"));
  });

  it("answers bad-host for a Host that ends in a number (an IP literal)", async () => {
    const hosts = ["10.0.0.12:8000", "127.1", "192.168.0.1.", "shop.example.0x7F", "1"];
    const got = await Promise.all(hosts.map((host) => c.through({ host })));
    expect(got).toEqual(hosts.map((host) => c.badHost(host)));
  });

  it("routes an absolute-form request by its target's authority, or refuses it whole", async () => {
    const got = await c.through({
      host: "nope.example.org",
      path: "http://shop.example.com/orders/42",
    });
    // HAProxy answers 400 itself when the authority and Host differ.
    if (got.status === 400) expect(got.echoed).toBeNull();
    else expect(got).toEqual(c.expected("shop.example.com"));
  });
}
