// An App's credential through a zero-hop proxy (ADR 53): the proxy holds it with the App's entry
// and sends it as the upstream's one `Authorization`, in place of the client's; an App without
// one passes the client's on; a rotation is the next request's value and the old one never comes
// back; the value reaches no client, not even from an upstream that echoes it back, nor through
// any path of the data port; and the App's 503s (secret-unusable, secret-unavailable,
// credentials-off) name it. Run by the zero-hop suite; values are compared as digests.

import { beforeAll, describe, expect, it } from "vitest";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import type { RawResponse } from "../support/raw-http.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { ECHOED_CREDENTIAL_HEADER, type ZeroHopRequest } from "../support/zero-hop.ts";
import type { ZeroHopContext } from "./zero-hop-context.ts";

// Values a proxy's table must carry intact: `|`, spaces, a tab, braces and a backslash.
const VALUES = ["s3cr3t|a b\t{http.request.uri} \\}=", "r0tated|{x}\\{y\\} %41"] as const;
const LONGEST = `L${"k".repeat(8_191)}`;
const CLIENT = "Basic Y2xpZW50OnNlY3JldA==";

/** Where the client saw a credential or the echoed header (by label, never the value). */
function seen(response: RawResponse, values: readonly string[]): string[] {
  const text = `${response.headers.map(([n, v]) => `${n}: ${v}`).join("\n")}\n${response.body.toString("latin1")}`;
  const found: string[] = [];
  values.forEach((value, i) => {
    const forms = [value, Buffer.from(value, "latin1").toString("base64"), JSON.stringify(value)];
    if (forms.some((form) => text.includes(form.trim()))) found.push(`credential ${i}`);
  });
  if (response.headers.some(([n]) => n === ECHOED_CREDENTIAL_HEADER))
    found.push(`the ${ECHOED_CREDENTIAL_HEADER} header`);
  return found;
}

export function credentialCases(c: ZeroHopContext): void {
  describe("with Apps that carry credentials", () => {
    const tokens = new Map<string, string>();
    let snapshot: Snapshot;
    let apps: AppInput[];
    const secrets = () =>
      secretsOf([...tokens].map(([name, token]) => [`apps/${name}`, secretData({ token })]));
    /** Pushes the Snapshot of `apps` and `tokens`, credentials served or not. */
    async function push(serveCredentials: boolean): Promise<void> {
      const at = { ...meta(c.nextRevision()), serveCredentials };
      snapshot = build(registryOf(apps), secrets(), at);
      await c.pushed(snapshot);
    }
    /** Gives `app` a new token, rebuilt as the mirror does for one Secret, and pushes it. */
    async function rotate(app: string, token: string): Promise<void> {
      tokens.set(`${app}-credentials`, token);
      const ref = { namespace: "apps", name: `${app}-credentials` };
      const at = { ...meta(c.nextRevision()), serveCredentials: true };
      snapshot = rebuildForSecrets(snapshot, [ref], secrets(), at);
      await c.pushed(snapshot);
    }
    const ask = async (request: ZeroHopRequest) => {
      const { answer, response } = await c.exchange(request);
      return { answer, seen: seen(response, [...VALUES, LONGEST]) };
    };
    const expected = (request: ZeroHopRequest) => ({
      answer: c.expected(snapshot, request),
      seen: [],
    });

    beforeAll(async () => {
      const [one, two] = c.urls();
      const vault = ["vault.example.com", "*.vault.example.com"];
      apps = [
        { name: "vault", hostnames: vault, upstream: one!, credential: { prefix: "Bearer " } },
        { name: "wide", hostnames: ["*.example.net"], upstream: `${two!}/`, credential: {} },
        { name: "open", hostnames: ["open.example.com"], upstream: two! },
        { name: "broken", hostnames: ["broken.example.com"], upstream: one!, credential: {} },
        { name: "absent", hostnames: ["absent.example.com"], upstream: one!, credential: {} },
      ];
      tokens.set("vault-credentials", `${VALUES[0]}\n`);
      tokens.set("wide-credentials", VALUES[1]);
      tokens.set("open-credentials", "t");
      tokens.set("broken-credentials", "x\ry");
      await push(true);
    }, 30_000);

    it("sends an App's credential as the upstream's one Authorization, in place of the client's, never to the client", async () => {
      const requests: ZeroHopRequest[] = [
        { host: "vault.example.com", headers: { authorization: CLIENT } },
        { host: "vault.example.com" },
        { host: "a.vault.example.com", headers: { Authorization: CLIENT } },
        { host: "shop.Example.NET:80", headers: { authorization: CLIENT } },
      ];
      const got = await Promise.all(requests.map(ask));
      expect(got).toEqual(requests.map(expected));
      expect(got.map((g) => g.answer.echoed?.authorization.length)).toEqual([1, 1, 1, 1]);
    });

    it("passes the client's own Authorization unchanged to an App without a credential", async () => {
      const requests: ZeroHopRequest[] = [
        { host: "open.example.com", headers: { authorization: CLIENT } },
        { host: "open.example.com" },
      ];
      const got = await Promise.all(requests.map(ask));
      expect(got).toEqual(requests.map(expected));
      expect(got.map((g) => g.answer.echoed?.authorization.length)).toEqual([1, 0]);
    });

    it("answers secret-unusable and secret-unavailable for an App with a credential, with its name", async () => {
      const requests = [{ host: "broken.example.com" }, { host: "absent.example.com" }];
      const got = await Promise.all(requests.map(ask));
      expect(got).toEqual([
        { answer: { ...c.answers.secretUnusable, app: "broken" }, seen: [] },
        { answer: { ...c.answers.secretUnavailable, app: "absent" }, seen: [] },
      ]);
    });

    it("reveals no credential through the data port, whatever the path", async () => {
      const paths = ["/replica-mirror/table", "/replica-mirror/digest", "/config/", "/id/x"];
      const requests = ["vault.example.com", "nope.example.com"].flatMap((host) =>
        paths.map((path) => ({ host, path })),
      );
      const got = await Promise.all(requests.map(ask));
      expect(got).toEqual(requests.map(expected));
    });

    it("sends a rotated credential on the next request, and the old one never after", async () => {
      await rotate("vault", VALUES[1]);
      const request = { host: "vault.example.com", headers: { authorization: CLIENT } };
      const got = [];
      for (let i = 0; i < 10; i++) got.push(await ask(request));
      expect(got).toEqual(got.map(() => expected(request)));
    });

    it("sends a credential of 8 KiB, the most a value may hold, whole", async () => {
      await rotate("wide", LONGEST);
      const request = { host: "x.example.net" };
      expect(await ask(request)).toEqual(expected(request));
    });

    it("answers credentials-off for every App with a credential when they are not served, and routes the others", async () => {
      await push(false);
      const requests: ZeroHopRequest[] = [
        { host: "vault.example.com", headers: { authorization: CLIENT } },
        { host: "y.example.net" },
        { host: "broken.example.com" },
        { host: "open.example.com", headers: { authorization: CLIENT } },
      ];
      const got = await Promise.all(requests.map(ask));
      expect(got.map((g) => g.answer.reason)).toEqual([
        "credentials-off",
        "credentials-off",
        "credentials-off",
        null,
      ]);
      expect(got).toEqual(requests.map(expected));
    });
  });
}
