// The admin API requests that take Caddy from the certificates it holds to a view's (ADR 56):
// one entry for a rotation, both lists when Apps come or go, and no key in a refusal.

import { beforeAll, describe, expect, it } from "vitest";
import {
  caddyCertificates,
  certificateRefused,
  certificateRequests,
  DEFAULT_POLICY,
  LOAD_PEM_PATH,
  NO_CERTIFICATES,
  POLICIES_PATH,
} from "../../src/push/caddy-certificates.ts";
import { certificateEntries } from "../../src/push/certificates.ts";
import { build } from "../../src/snapshot/build.ts";
import { makeCertificate, type TestCertificate, tlsSecretData } from "../support/certificates.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";

describe("Caddy's certificate requests", () => {
  const hosts = (name: string) => [`${name}.example.com`, `*.${name}.example.com`];
  const input = ["a", "b"].map((name) => ({ name, hostnames: hosts(name), tls: `${name}-tls` }));
  const viewOf = (certs: Readonly<Record<string, TestCertificate>>, version: string) =>
    caddyCertificates(
      certificateEntries(
        build(
          registryOf(input),
          secretsOf(
            Object.entries(certs).map(([app, c]) => [
              `apps/${app}-tls`,
              secretData(tlsSecretData(c), `${app}${version}`),
            ]),
          ),
          { ...meta(1, Date.now()), serveCertificates: true },
        ),
      ),
    );
  let certs: Record<string, TestCertificate>;
  beforeAll(() => {
    certs = Object.fromEntries(
      ["a", "b", "b2"].map((k) => [k, makeCertificate({ names: hosts(k.slice(0, 1)) })]),
    );
  });
  const paths = (requests: readonly { path: string }[]) => requests.map((r) => r.path);
  const select = (app: string) => ({ any_tag: [`replica-mirror-app:${app}`] });

  it("gives each App a policy for its exact names, then one for its wildcards, the default last", () => {
    expect(viewOf({ a: certs.a!, b: certs.b! }, "1").policies).toEqual([
      { match: { sni: ["a.example.com"] }, certificate_selection: select("a") },
      { match: { sni: ["b.example.com"] }, certificate_selection: select("b") },
      { match: { sni: ["*.a.example.com"] }, certificate_selection: select("a") },
      { match: { sni: ["*.b.example.com"] }, certificate_selection: select("b") },
      DEFAULT_POLICY,
    ]);
  });

  it("sends a rotated certificate's entry only, and nothing for no change", () => {
    const before = viewOf({ a: certs.a!, b: certs.b! }, "1");
    const after = viewOf({ a: certs.a!, b: certs.b2! }, "2");
    const [rotation] = certificateRequests(before, after);
    const body = JSON.parse(rotation!.body());
    expect({
      paths: paths(certificateRequests(before, after)),
      certificate: body.certificate,
      tags: body.tags,
      // Compared, not shown: a failing comparison would print the key.
      keyIsB2: body.key.trim() === certs.b2!.key.trim(),
      unchanged: paths(certificateRequests(after, after)),
      none: paths(certificateRequests(NO_CERTIFICATES, NO_CERTIFICATES)),
    }).toEqual({
      paths: [`${LOAD_PEM_PATH}/1`],
      certificate: after.sources[1]!.certificate.chain,
      tags: ["replica-mirror-app:b"],
      keyIsB2: true,
      unchanged: [],
      none: [],
    });
  });

  it("sends the whole list and the policies when an App comes or goes, or nothing is known", () => {
    const one = viewOf({ a: certs.a! }, "1");
    const two = viewOf({ a: certs.a!, b: certs.b! }, "1");
    expect({
      added: paths(certificateRequests(one, two)),
      removed: paths(certificateRequests(two, one)),
      unknown: paths(certificateRequests(null, two)),
      cleared: paths(certificateRequests(two, NO_CERTIFICATES)),
    }).toEqual({
      added: [LOAD_PEM_PATH, POLICIES_PATH],
      removed: [LOAD_PEM_PATH, POLICIES_PATH],
      unknown: [LOAD_PEM_PATH, POLICIES_PATH],
      cleared: [LOAD_PEM_PATH, POLICIES_PATH],
    });
  });

  it("names no key in a refusal that quotes one", () => {
    const text = `loading certificate: ${certs.a!.key} and ${certs.a!.crt}`;
    const refused = certificateRefused("PATCH", { status: 400, text });
    expect(refused).toEqual({
      ok: false,
      error: { reason: "rejected", message: "PATCH: 400 loading certificate: [pem]\n and [pem]\n" },
    });
  });
});
