// How an App's Secret value becomes its upstream's `Authorization` (ADR 53): the rules of
// `resolveApp` for an App with a `credential`, each with the answer `/v1/route` gives.

import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER, routeAnswerer } from "../../src/answers/route-answer.ts";
import { build } from "../../src/snapshot/build.ts";
import { findApp } from "../../src/snapshot/lookup.ts";
import { assertConsistent } from "../support/consistency.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";

const registry = registryOf([
  { name: "keyed", hostnames: ["keyed.example"], credential: { prefix: "Bearer " } },
  { name: "bare", hostnames: ["bare.example"], secret: "keyed-credentials", credential: {} },
  { name: "plain", hostnames: ["plain.example"], secret: "keyed-credentials" },
]);

/** What each App of `registry` shows when `keyed-credentials` holds `token` (undefined: absent). */
function resolved(token: string | undefined, serveCredentials: boolean) {
  const secrets = secretsOf(
    token === undefined ? [] : [["apps/keyed-credentials", secretData({ token })]],
  );
  const s = build(registry, secrets, { ...meta(), serveCredentials });
  assertConsistent(s);
  const answer = routeAnswerer(DEFAULT_RETRY_AFTER);
  return ["keyed", "bare", "plain"].map((name) => {
    const app = findApp(s, name)!;
    const routed = answer(s, ["Host", `${name}.example`]);
    return {
      name,
      state: app.state,
      reason: app.reason,
      credential: app.credential,
      header: routed.headers["x-mirror-credential"] ?? null,
      status: routed.status,
      retryAfter: routed.headers["retry-after"] ?? null,
    };
  });
}

const row = (
  name: string,
  state: string,
  reason: string | null,
  credential: string | null = null,
) => ({
  name,
  state,
  reason,
  credential,
  header: credential,
  status: state === "ready" ? 200 : 503,
  retryAfter: state === "ready" || state === "credentials-off" ? null : "5",
});

describe("an App with a credential", () => {
  it("is served, as its prefix and the value less one trailing line break, with --serve-credentials", () => {
    expect(resolved("tok-1\r\n", true)).toEqual([
      row("keyed", "ready", null, "Bearer tok-1"),
      row("bare", "ready", null, "tok-1"),
      // No credential: the value is the Secret's as ever, trailing bytes and all.
      row("plain", "ready", null),
    ]);
    // Space and tab are header bytes; only one line break goes.
    expect(resolved("a b\tc\n", true)[1]).toEqual(row("bare", "ready", null, "a b\tc"));
    expect(resolved("a b\tc\n\n", true)[1]).toEqual(
      row("bare", "secret-unusable", "value-not-a-header"),
    );
  });

  it("answers credentials-off without the flag, whatever its Secret, and the others as ever", () => {
    for (const token of ["tok", undefined, "bad\u0000"])
      expect(resolved(token, false).slice(0, 2)).toEqual([
        row("keyed", "credentials-off", "credentials-off"),
        row("bare", "credentials-off", "credentials-off"),
      ]);
    expect(resolved("tok", false)[2]).toEqual(row("plain", "ready", null));
  });

  it("is unavailable, as any App, when its Secret is absent or the value empty, a lone line break too", () => {
    expect(resolved(undefined, true).map((r) => r.reason)).toEqual([
      "secret-absent",
      "secret-absent",
      "secret-absent",
    ]);
    expect(resolved("\r\n", true)).toEqual([
      row("keyed", "secret-unavailable", "value-empty"),
      row("bare", "secret-unavailable", "value-empty"),
      row("plain", "ready", null),
    ]);
  });

  it("is unusable with a value over 8 KiB, or a byte other than visible ASCII, space and tab", () => {
    const reasons = (token: string) => resolved(token, true).map((r) => [r.state, r.reason]);
    const unusable = (reason: string) => [
      ["secret-unusable", reason],
      ["secret-unusable", reason],
      ["ready", null],
    ];
    expect(resolved(`${"k".repeat(8192)}\n`, true)[1]!.credential).toBe("k".repeat(8192));
    expect(reasons("k".repeat(8193))).toEqual(unusable("value-too-long"));
    for (const bad of ["a\rb", "a\nb", "a\u0000b", "\u007f", "caf\u00e9", "x\u001b", "\r"])
      expect(reasons(bad), JSON.stringify(bad)).toEqual(unusable("value-not-a-header"));
  });
});
