// Random routing worlds and request hosts for the zero-hop tests: Registries whose hostnames
// collide, nest wildcards and conflict often (a small label alphabet), some Apps ready and some
// not, upstreams a proxy can or cannot route to; and request hosts around those names, valid and
// not (case, ports, trailing dots, deeper labels, IPv6, stray characters, over-long names).

import fc from "fast-check";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { type AppInput, snapshotOf } from "./world.ts";

const LABELS = ["a", "b", "shop", "xn--bcher-kva", "0"] as const;
const label = fc.constantFrom(...LABELS);
const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join("."));
// What the Registry admits (ADR 48): a last label that is not a number, a wildcard over two
// labels or more. Request hosts (`name`) may end in "0" all the same.
const declared = (minLabels: number) =>
  fc
    .tuple(
      fc.array(label, { minLength: minLabels - 1, maxLength: 3 }),
      fc.constantFrom(...LABELS.filter((l) => l !== "0")),
    )
    .map(([ls, last]) => [...ls, last].join("."));
const pattern = fc.oneof(
  declared(1),
  declared(2).map((h) => `*.${h}`),
);
const appName = fc.constantFrom("a1", "a2", "b1", "c", "d", "e", "f", "g");

/** One random world: the Registry's Apps and the Secrets that exist (by name, in `apps`). */
export interface ZeroHopWorld {
  readonly apps: readonly AppInput[];
  readonly secrets: Readonly<Record<string, Record<string, string>>>;
}

/**
 * Worlds of up to 8 Apps whose upstream is one of `upstreams` or absent; an App is ready when
 * its Secret `<name>-credentials` exists with a non-empty `token`.
 */
export function zeroHopWorld(upstreams: readonly string[]): fc.Arbitrary<ZeroHopWorld> {
  const app = fc.record({
    name: appName,
    hostnames: fc.uniqueArray(pattern, { minLength: 1, maxLength: 4 }),
    upstream: fc.option(fc.constantFrom(...upstreams), { nil: undefined }),
    secret: fc.constantFrom("ready", "absent", "empty"),
  });
  return fc.uniqueArray(app, { selector: (a) => a.name, maxLength: 8 }).map((apps) => ({
    apps: apps.map(({ secret: _, ...a }) =>
      a.upstream === undefined ? { name: a.name, hostnames: a.hostnames } : a,
    ),
    secrets: Object.fromEntries(
      apps
        .filter((a) => a.secret !== "absent")
        .map((a) => [`${a.name}-credentials`, { token: a.secret === "ready" ? "t" : "" }]),
    ),
  }));
}

/** The Snapshot of a world, with this revision. */
export function snapshotOfWorld(world: ZeroHopWorld, revision = 1): Snapshot {
  return snapshotOf([...world.apps], { ...world.secrets }, revision);
}

const upper = (s: string) => s.toUpperCase();

/** Request hosts near the world's names, and hosts `/v1/route` refuses. */
export const requestHost: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: name },
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom("x", "y.z", "_w"), name).map(([l, n]) => `${l}.${n}`),
  },
  { weight: 1, arbitrary: name.map(upper) },
  { weight: 1, arbitrary: name.map((n) => `${n}.`) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(name, fc.constantFrom("80", "8080", "65535", "99999"))
      .map(([n, p]) => `${n}:${p}`),
  },
  { weight: 1, arbitrary: name.map((n) => `${n}.:80`) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(name, fc.constantFrom("..", ":", ":123456", ":x", ",a", "*", "%41", " x", "/", "]"))
      .map(([n, junk]) => `${n}${junk}`),
  },
  { weight: 1, arbitrary: name.map((n) => `*.${n}`) },
  { weight: 1, arbitrary: name.map((n) => `.${n}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("", "[::1]", "[::1]:80", "127.0.0.1", "localhost:8000"),
  },
  // Names a URL parser reads as IPv4 addresses: `/v1/route` refuses them.
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "10.0.0.12:8000",
      "127.1",
      "0x7F.1",
      "shop.0x1f.",
      "a.0x",
      "shop.0x7F",
      "127.1.",
      "2130706433",
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 66 }).map((n) => `${"l".repeat(n)}.shop`) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 250, max: 262 })
      .map((n) => `${"a.".repeat(n).slice(0, n - 4)}shop`),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
