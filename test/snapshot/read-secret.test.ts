// What an App concludes of a Secret the store holds for other keys than the App reads (ADR 68):
// a Registry that newly reads a key of a held Secret fetches it again, and until that fetch
// brings it (a failed one is retried) the key is unknown. Found by chaos seed 9324: an App shown
// `key-missing` for a key its Secret had all along, while the fetch failed (API server down).

import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER, routeAnswerer } from "../../src/answers/route-answer.ts";
import { build } from "../../src/snapshot/build.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import { type ReadKeys, type SecretData, UNKEPT_VALUE } from "../../src/snapshot/types.ts";
import { assertConsistent } from "../support/consistency.ts";
import { meta, registryOf, secretsOf } from "../support/world.ts";

const registry = registryOf([
  { name: "keyed", hostnames: ["keyed.example"], credential: { prefix: "Bearer " } },
  { name: "plain", hostnames: ["plain.example"], secret: "keyed-credentials" },
  { name: "alt", hostnames: ["alt.example"], secret: "keyed-credentials", key: "alt" },
  {
    name: "site",
    hostnames: ["site.example"],
    secret: "keyed-credentials",
    tls: "keyed-credentials",
  },
]);

const read = (bytes: string[], presence: string[]): ReadKeys => ({
  bytes: new Set(bytes),
  presence: new Set(presence),
});

/** Each App of `registry`, `keyed-credentials` held as `held`, credentials and certificates on. */
function resolved(held: SecretData) {
  const secrets = secretsOf([["apps/keyed-credentials", held]]);
  const s = build(registry, secrets, {
    ...meta(),
    serveCredentials: true,
    serveCertificates: true,
  });
  assertConsistent(s);
  const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
  return ["keyed", "plain", "alt", "site"].map((name) => {
    const app = findApp(s, name)!;
    return {
      name,
      reason: app.reason,
      secretResourceVersion: app.secretResourceVersion,
      status: answer(s, ["Host", `${name}.example`]).status,
      certificate: app.certificate && [app.certificate.state, app.certificate.refusal?.rule],
    };
  });
}

const row = (
  name: string,
  reason: string | null,
  secretResourceVersion: string | null,
  certificate: [string, string] | null = null,
) => ({
  name,
  reason,
  secretResourceVersion,
  status: reason === null ? 200 : 503,
  certificate,
});

describe("a key this replica has not read of a Secret it holds", () => {
  it("is served as the Secret not fetched yet: absent, with no resourceVersion", () => {
    // Held for `token`'s presence only: the Apps that read it are resolved; the credential's
    // bytes, `alt` and the certificate's keys were never read.
    const held = {
      data: { token: UNKEPT_VALUE },
      resourceVersion: "6",
      keptFor: read([], ["token"]),
    };
    expect(resolved(held)).toEqual([
      row("keyed", "secret-absent", null),
      row("plain", null, "6"),
      row("alt", "secret-absent", null),
      row("site", null, "6", ["refused", "secret-absent"]),
    ]);
  });

  it("is what the Secret holds once read: a key read and absent is missing", () => {
    const held = {
      data: { token: "tok-1" },
      resourceVersion: "7",
      keptFor: read(["token", "tls.crt", "tls.key"], ["alt"]),
    };
    expect(resolved(held)).toEqual([
      row("keyed", null, "7"),
      row("plain", null, "7"),
      row("alt", "key-missing", "7"),
      row("site", null, "7", ["refused", "key-missing"]),
    ]);
  });
});
