// The log tells an operator once per App when its credential is refused (ADR 53): entering
// credentials-off names the flag, entering secret-unusable names the rule; publishing again, a
// rotation, another App's change or a new Registry that keeps the App as it was log nothing more.
// Never a byte of the value, at any level.

import { describe, expect, it } from "vitest";
import { logObserver } from "../../src/ops/log-observer.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import { SecretIndex } from "../../src/snapshot/secret-index.ts";
import type { SecretData, Snapshot } from "../../src/snapshot/types.ts";
import { memoryLogger } from "../support/log-sink.ts";
import { type AppInput, meta, registryOf, secretData } from "../support/world.ts";

const MARKER = "MARKER-a9f3-log";
const apps: AppInput[] = [
  { name: "vault", hostnames: ["vault.example.com"], credential: { prefix: "Bearer " } },
  { name: "shop", hostnames: ["shop.example.com"] },
  // Enough Apps for two chunks: a change in one shares the other.
  ...Array.from({ length: 70 }, (_, i) => ({
    name: `z${String(i).padStart(2, "0")}`,
    hostnames: [`z${i}.example.com`],
    ...(i === 69 ? { credential: {} } : {}),
  })),
];

/** Warnings the observer wrote for each step, as {app, reason, rule, msg}; every line at trace checked for the marker. */
function run(
  serveCredentials: boolean,
  steps: ((s: Snapshot, secrets: SecretIndex<SecretData>) => Snapshot)[],
) {
  const { logger, lines } = memoryLogger("trace");
  const observer = logObserver(logger);
  const secrets = new SecretIndex<SecretData>();
  const set = (name: string, token: string) =>
    secrets.set("apps", name, secretData({ token }, token.length.toString()));
  set("vault-credentials", `${MARKER}-1`);
  set("z69-credentials", `${MARKER}-z`);
  let snapshot = build(registryOf(apps), secrets, { ...meta(1), serveCredentials });
  const publish = () =>
    observer.published?.({ snapshot, kind: "whole", buildMs: 1, eventToSwapMs: 1 });
  const warnings: unknown[][] = [];
  const read = () => {
    const all = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    const out = all
      .filter((l) => l.level === 40)
      .map(({ app, reason, rule, msg }) => ({ app, reason, rule, msg }));
    warnings.push(out.slice(warnings.flat().length));
  };
  publish();
  read();
  for (const step of steps) {
    snapshot = step(snapshot, secrets);
    publish();
    read();
  }
  expect(lines().join("\n")).not.toContain("MARKER");
  return warnings;
}

const changed =
  (name: string, token: string | null) => (s: Snapshot, secrets: SecretIndex<SecretData>) => {
    if (token === null) secrets.delete("apps", name);
    else secrets.set("apps", name, secretData({ token }, String(s.revision + 1)));
    return rebuildForSecrets(s, [{ namespace: "apps", name }], secrets, {
      ...meta(s.revision + 1),
      serveCredentials: true,
    });
  };

const OFF = "App has a credential and --serve-credentials is off: it answers 503 credentials-off";
const UNUSABLE =
  "App's Secret value cannot be its Authorization header: it answers 503 secret-unusable";
const NOT_A_HEADER =
  "the value holds a byte other than visible ASCII, space and tab (a CR, LF or NUL, say)";

describe("the log of credential refusals", () => {
  it("names --serve-credentials once per App entering credentials-off, not once per publish", () => {
    const again = (s: Snapshot, secrets: SecretIndex<SecretData>) =>
      build(registryOf(apps), secrets, { ...meta(s.revision + 1), serveCredentials: false });
    expect(run(false, [again, again])).toEqual([
      [
        { app: "vault", reason: undefined, rule: undefined, msg: OFF },
        { app: "z69", reason: undefined, rule: undefined, msg: OFF },
      ],
      [],
      [],
    ]);
  });

  it("names the rule once per App entering secret-unusable, and again after it was served", () => {
    expect(
      run(true, [
        changed("vault-credentials", `${MARKER}\r\n-2\n`),
        changed("vault-credentials", `${MARKER}\u0000`),
        changed("vault-credentials", MARKER.repeat(600)),
        changed("z69-credentials", `${MARKER}-rotated`),
        changed("vault-credentials", `${MARKER}-3`),
        changed("vault-credentials", null),
        changed("vault-credentials", `${MARKER}\r`),
      ]),
    ).toEqual([
      [],
      [{ app: "vault", reason: "value-not-a-header", rule: NOT_A_HEADER, msg: UNUSABLE }],
      [],
      [
        {
          app: "vault",
          reason: "value-too-long",
          rule: "the value is longer than 8192 bytes",
          msg: UNUSABLE,
        },
      ],
      [],
      [],
      [],
      [{ app: "vault", reason: "value-not-a-header", rule: NOT_A_HEADER, msg: UNUSABLE }],
    ]);
  });
});
