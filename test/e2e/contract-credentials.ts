// An App's credential through a real data plane in hop mode (ADR 53): its upstream gets the
// sidecar's x-mirror-credential as its one Authorization, in place of the client's; an App without
// one gets the client's unchanged; a rotation reaches the next requests; the client never sees the
// value, even from an upstream that echoes it back; the refusals are mapped like
// secret-unavailable; and a request the data plane routes back to the data listener (an upstream
// name that resolves to the pod) is refused there. Run inside every hop-mode contract suite.

import { beforeAll, describe, expect, it } from "vitest";
import type { ClientAnswer, ClientRequest } from "../support/data-plane.ts";
import {
  authorizationDigest,
  ECHOED_CREDENTIAL_HEADER,
  type Echoed,
} from "../support/echo-upstream.ts";
import { CREDENTIALS, HOSTS } from "../support/routing-world.ts";
import { waitUntil } from "../support/wait.ts";
import type { ContractContext } from "./contract.ts";
import { echoedOf, genuineMirror } from "./contract-trust.ts";

/** What the client sees of the two credential refusals through this data plane. */
export interface CredentialAnswers {
  readonly secretUnusable: ClientAnswer;
  readonly credentialsOff: ClientAnswer;
}

/** What the credential cases need besides the contract's context. */
export interface CredentialContext extends ContractContext {
  readonly credentialAnswers: CredentialAnswers;
  exchange(
    request: ClientRequest,
  ): Promise<{ answer: ClientAnswer; headers: Record<string, unknown> }>;
}

const bearer = (value: string) => authorizationDigest(`Bearer ${value}`);

/** Where the client saw any of the credentials, or the echoed header: nowhere, always. */
function seen(answer: ClientAnswer, headers: Record<string, unknown>): string[] {
  const text = `${JSON.stringify(headers)}\n${answer.body}`;
  const found: string[] = CREDENTIALS.filter((v) => text.includes(v));
  if (ECHOED_CREDENTIAL_HEADER in headers) found.push(`the ${ECHOED_CREDENTIAL_HEADER} header`);
  return found;
}

/** Asks for `vault` until its upstream gets `value`; then every request gets it. */
async function untilSent(c: CredentialContext, value: string): Promise<Echoed["authorization"][]> {
  await waitUntil(
    async () => {
      const echoed = echoedOf(await c.ask({ host: HOSTS.credential }));
      return typeof echoed !== "string" && echoed.authorization[0] === bearer(value);
    },
    { timeoutMs: 5_000, intervalMs: 20, what: "the rotated credential to reach the upstream" },
  );
  const after: Echoed["authorization"][] = [];
  for (let i = 0; i < 10; i++) {
    const echoed = echoedOf(await c.ask({ host: HOSTS.credential }));
    after.push(typeof echoed === "string" ? [echoed] : echoed.authorization);
  }
  return after;
}

export function credentialCases(c: CredentialContext): void {
  it("sends an App's credential as the upstream's one Authorization, in place of the client's, never to the client", async () => {
    const { answer, headers } = await c.exchange({
      host: HOSTS.credential,
      // One: nginx refuses a request with two Authorization lines (400).
      headers: { authorization: "Bearer client-token" },
    });
    expect({
      status: answer.status,
      echoed: echoedOf(answer),
      seen: seen(answer, headers),
    }).toMatchObject({
      status: 200,
      echoed: {
        app: "vault",
        mirror: genuineMirror(c, "vault"),
        authorization: [bearer(CREDENTIALS[0])],
      },
      seen: [],
    });
  });

  it("passes the client's own Authorization unchanged to an App without a credential", async () => {
    const own = "Basic Y2xpZW50OnNlY3JldA==";
    const sent = await c.exchange({ host: HOSTS.ready, headers: { authorization: own } });
    const none = await c.exchange({ host: HOSTS.ready });
    expect(
      [sent, none].map(({ answer, headers }) => {
        const echoed = echoedOf(answer);
        return [
          answer.status,
          typeof echoed === "string" ? echoed : echoed.authorization,
          seen(answer, headers),
        ];
      }),
    ).toEqual([
      [200, [authorizationDigest(own)], []],
      [200, [], []],
    ]);
  });

  it("sends a rotated credential on the next requests, and the old one never after", async () => {
    c.world().writeCredential(CREDENTIALS[1]);
    const after = await untilSent(c, CREDENTIALS[1]);
    expect(after).toEqual(after.map(() => [bearer(CREDENTIALS[1])]));
  });

  it("sends a credential of 8 KiB, the most a value may hold, whole", async () => {
    const longest = `${CREDENTIALS[1]}-${"k".repeat(8192 - CREDENTIALS[1].length - 1)}`;
    c.world().writeCredential(longest);
    const after = await untilSent(c, longest);
    expect(after).toEqual(after.map(() => [bearer(longest)]));
  });

  it("answers secret-unusable for a credential whose value holds a CR", async () => {
    expect(await c.ask({ host: HOSTS.unusable })).toEqual(c.credentialAnswers.secretUnusable);
  });

  it("refuses a request routed back to the data listener 403 routed-request, whatever host it names", async () => {
    const { answer, headers } = await c.exchange({
      host: HOSTS.loop,
      path: "/v1/route",
      headers: { "x-forwarded-host": HOSTS.credential },
    });
    expect({ answer, seen: seen(answer, headers) }).toEqual({
      answer: { status: 403, reason: "routed-request", retryAfter: null, body: "" },
      seen: [],
    });
  });

  describe("with a sidecar without --serve-credentials", () => {
    beforeAll(() => c.world().replaceWithoutCredentials(), 30_000);

    it("answers credentials-off for an App with a credential, and routes the others", async () => {
      const off = await c.ask({ host: HOSTS.credential });
      const shop = echoedOf(await c.ask({ host: HOSTS.ready }));
      expect({ off, shop: typeof shop === "string" ? shop : shop.app }).toEqual({
        off: c.credentialAnswers.credentialsOff,
        shop: "shop",
      });
    });
  });
}
