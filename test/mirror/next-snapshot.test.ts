import { describe, expect, it } from "vitest";
import { type NextSnapshot, nextSnapshot } from "../../src/mirror/next-snapshot.ts";
import { type Changes, NO_CHANGES } from "../../src/mirror/pending-changes.ts";
import { build } from "../../src/snapshot/build.ts";
import { listApps } from "../../src/snapshot/lookup.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { meta, registryOf, registryStatus, secretData, secretsOf } from "../support/world.ts";

const BUILT_AT = 1_800_000_000_000;
const AT = { builtAt: BUILT_AT };
const apps = [
  { name: "shop", hostnames: ["shop.x"] },
  { name: "blog", hostnames: ["blog.x"] },
];
const registry = registryOf(apps);
const secrets = secretsOf([
  ["apps/shop-credentials", secretData({ token: "s2" }, "12")],
  ["apps/blog-credentials", secretData({ token: "b1" }, "11")],
]);
/**
 * Built when shop's Secret was at rv 10 and blog's did not exist yet, from an earlier copy of the
 * same document (a whole build shares the routes of a Snapshot built from the same object).
 */
const previous: Snapshot = build(
  registryOf(apps),
  secretsOf([["apps/shop-credentials", secretData({ token: "s1" }, "10")]]),
  meta(4),
);
const changes = (c: Partial<Changes>): Changes => ({ ...NO_CHANGES, ...c });
const ref = (name: string) => ({ namespace: "apps", name });

/** What a published Snapshot shows, as one comparable value. */
const shown = (next: NextSnapshot | null) =>
  next === null
    ? null
    : {
        kind: next.kind,
        revision: next.snapshot.revision,
        builtAt: next.snapshot.builtAt,
        registry: next.snapshot.registry,
        apps: listApps(next.snapshot).map((a) => [a.name, a.reason, a.secretResourceVersion]),
        routesShared: next.snapshot.routes === previous.routes,
      };

describe("nextSnapshot", () => {
  it("builds nothing before a Registry was adopted, then the first Snapshot whole", () => {
    const adopted = { registry, status: registryStatus("1"), whole: false };
    expect([
      shown(nextSnapshot(null, changes({ secrets: [ref("shop-credentials")] }), secrets, AT)),
      shown(nextSnapshot(null, changes({ registry: adopted }), secrets, AT)),
    ]).toEqual([
      null,
      {
        kind: "whole",
        revision: 1,
        builtAt: BUILT_AT,
        registry: registryStatus("1"),
        apps: [
          ["blog", null, "11"],
          ["shop", null, "12"],
        ],
        routesShared: false,
      },
    ]);
  });

  it("re-resolves only the Apps of changed Secrets, sharing the routes", () => {
    const next = nextSnapshot(
      previous,
      changes({ secrets: [ref("shop-credentials")], since: 3 }),
      secrets,
      AT,
    );
    expect(shown(next)).toEqual({
      kind: "secrets",
      revision: 5,
      builtAt: BUILT_AT,
      registry: previous.registry,
      apps: [
        ["blog", "secret-absent", null],
        ["shop", null, "12"],
      ],
      routesShared: true,
    });
  });

  it("publishes nothing when nothing a Snapshot shows changed", () => {
    const sameStatus = { registry, status: { ...previous.registry }, whole: false };
    expect(
      [
        changes({}),
        changes({ secrets: [ref("referenced-by-no-app")], since: 1 }),
        changes({ registry: sameStatus }),
      ].map((c) => nextSnapshot(previous, c, secrets, AT)),
    ).toEqual([null, null, null]);
  });

  it("publishes a new Registry status alone, and rebuilds whole when the document changed", () => {
    const refused = { registry, status: registryStatus("2", "refused"), whole: false };
    const other = registryOf([{ name: "wiki", hostnames: ["wiki.x"], secret: "blog-credentials" }]);
    const changed = { registry: other, status: registryStatus("3"), whole: true };
    expect([
      shown(nextSnapshot(previous, changes({ registry: refused }), secrets, AT)),
      shown(nextSnapshot(previous, changes({ registry: changed }), secrets, AT)),
    ]).toEqual([
      {
        kind: "secrets",
        revision: 5,
        builtAt: BUILT_AT,
        registry: registryStatus("2", "refused"),
        apps: [
          ["blog", "secret-absent", null],
          ["shop", null, "10"],
        ],
        routesShared: true,
      },
      {
        kind: "whole",
        revision: 5,
        builtAt: BUILT_AT,
        registry: registryStatus("3"),
        apps: [["wiki", null, "11"]],
        routesShared: false,
      },
    ]);
  });
});
