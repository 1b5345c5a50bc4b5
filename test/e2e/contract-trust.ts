// What a client must not be able to do through a data plane, in either mode: choose what the
// upstream is told about the request (any `X-Mirror-*` header, however many headers come
// first), reach an App through an IP-literal Host, or route by `Host` when the request target
// names another authority (RFC 9112 §3.2.2). Run inside every data plane's contract suite.

import { expect, it } from "vitest";
import type { ClientAnswer } from "../support/data-plane.ts";
import type { Echoed } from "../support/echo-upstream.ts";
import { FORGED_MIRROR_HEADERS, paddingHeaders } from "../support/forged-headers.ts";
import { HOSTS } from "../support/routing-world.ts";
import type { ContractContext } from "./contract.ts";

/** The `x-mirror-*` headers a data plane sets on a routed request to its upstream. */
export type MirrorHeader = "x-mirror-app" | "x-mirror-revision" | "x-mirror-upstream";

/** What the upstream must receive of `x-mirror-*` for `app`: each header the plane sets, once. */
export function genuineMirror(c: ContractContext, app: string): Echoed["mirror"] {
  const value = (name: MirrorHeader) =>
    name === "x-mirror-app"
      ? app
      : name === "x-mirror-upstream"
        ? c.world().upstream
        : expect.stringMatching(/^[1-9][0-9]*$/);
  return Object.fromEntries(c.upstreamHeaders.map((name) => [name, [value(name)]]));
}

/** The upstream's report, or the body as it is when the answer did not come from the upstream. */
export function echoedOf(answer: ClientAnswer): Echoed | string {
  try {
    return JSON.parse(answer.body) as Echoed;
  } catch {
    return answer.body;
  }
}

export function trustCases(c: ContractContext): void {
  it("strips every client X-Mirror-* header before the upstream, whatever its case", async () => {
    const answer = await c.ask({ host: HOSTS.ready, headers: FORGED_MIRROR_HEADERS });
    expect({ status: answer.status, mirror: mirrorOf(answer) }).toEqual({
      status: 200,
      mirror: genuineMirror(c, "shop"),
    });
  });

  it("strips them after 120 other header lines too, or refuses the request whole", async () => {
    const answer = await c.ask({
      host: HOSTS.ready,
      headers: { ...paddingHeaders(120), ...FORGED_MIRROR_HEADERS },
    });
    // HAProxy takes at most 101 header lines (tune.http.maxhdr) and answers 400 past them.
    if (answer.status === 400) expect(typeof echoedOf(answer)).toBe("string");
    else
      expect({ status: answer.status, mirror: mirrorOf(answer) }).toEqual({
        status: 200,
        mirror: genuineMirror(c, "shop"),
      });
  });

  it("answers bad-host for a Host that ends in a number (an IP literal)", async () => {
    const hosts = ["10.0.0.12:8000", "127.1", "192.168.0.1.", "shop.example.0x7f"];
    const answers = await Promise.all(hosts.map((host) => c.ask({ host })));
    expect(answers).toEqual(hosts.map(() => c.answers.badHost));
  });

  it("routes an absolute-form request by its target's authority, or refuses it whole", async () => {
    const answer = await c.ask({ host: HOSTS.unknown, path: `http://${HOSTS.ready}/orders/42` });
    // HAProxy answers 400 itself when the authority and Host differ.
    if (answer.status === 400) expect(typeof echoedOf(answer)).toBe("string");
    else
      expect({ status: answer.status, echoed: echoedOf(answer) }).toMatchObject({
        status: 200,
        echoed: { app: "shop", host: HOSTS.ready, path: "/orders/42" },
      });
  });
}

function mirrorOf(answer: ClientAnswer): Echoed["mirror"] | string {
  const echoed = echoedOf(answer);
  return typeof echoed === "string" ? echoed : echoed.mirror;
}
