// Random routing worlds and request hosts for the zero-hop tests: Registries whose hostnames
// collide, nest wildcards and conflict often (a small label alphabet), some Apps ready and some
// not, some with a credential whose value holds what a proxy's table must keep (`|`, spaces,
// tabs, braces, backslashes) or cannot be one, served or not; upstreams a proxy can or cannot
// route to; Secret rotations; and request hosts around those names, valid and not (case, ports,
// trailing dots, deeper labels, IPv6, stray characters, over-long names).

import fc from "fast-check";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "./world.ts";

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

/**
 * One random world: the Registry's Apps, the Secrets that exist (by name, in `apps`), and
 * whether credentials are served (`--serve-credentials`).
 */
export interface ZeroHopWorld {
  readonly apps: readonly AppInput[];
  readonly secrets: Readonly<Record<string, Record<string, string>>>;
  readonly serveCredentials: boolean;
}

// Visible ASCII that a table format could trip on, space and tab.
const tricky = [..."|{}\\ \t=%:+/\"'Ab9"];

/**
 * A Secret's `token`: empty (not ready), short, any of `tricky`, with the line break `kubectl
 * --from-file` leaves, the most a credential may hold, or what no credential may (a CR, one byte
 * too many: secret-unusable for an App with a `credential`, ready for one without).
 */
export const secretValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("t", "") },
  {
    weight: 4,
    arbitrary: fc.string({ unit: fc.constantFrom(...tricky), minLength: 1, maxLength: 12 }),
  },
  { weight: 1, arbitrary: fc.constantFrom("v\n", "v\r\n", " v \t") },
  { weight: 1, arbitrary: fc.constantFrom("k".repeat(8_192), "x\ry", "x".repeat(8_193)) },
);

const credential = fc.option(fc.constantFrom({ prefix: "Bearer " }, {}, { prefix: "Token a|b " }), {
  nil: undefined,
});

/**
 * Worlds of up to 8 Apps whose upstream is one of `upstreams` or absent, some with a
 * `credential`; an App is ready when its Secret `<name>-credentials` exists with a non-empty
 * `token` (and, with a credential, one that can be a header, credentials served).
 */
export function zeroHopWorld(upstreams: readonly string[]): fc.Arbitrary<ZeroHopWorld> {
  const app = fc.record({
    name: appName,
    hostnames: fc.uniqueArray(pattern, { minLength: 1, maxLength: 4 }),
    upstream: fc.option(fc.constantFrom(...upstreams), { nil: undefined }),
    credential,
    token: fc.option(secretValue, { nil: undefined }),
  });
  return fc
    .tuple(fc.uniqueArray(app, { selector: (a) => a.name, maxLength: 8 }), fc.boolean())
    .map(([apps, serveCredentials]) => ({
      apps: apps.map(
        ({ token: _, ...a }): AppInput => ({
          name: a.name,
          hostnames: a.hostnames,
          ...(a.upstream === undefined ? {} : { upstream: a.upstream }),
          ...(a.credential === undefined ? {} : { credential: a.credential }),
        }),
      ),
      secrets: Object.fromEntries(
        apps
          .filter((a) => a.token !== undefined)
          .map((a) => [`${a.name}-credentials`, { token: a.token! }]),
      ),
      serveCredentials,
    }));
}

/** The Snapshot of a world, with this revision. */
export function snapshotOfWorld(world: ZeroHopWorld, revision = 1): Snapshot {
  return build(registryOf([...world.apps]), secretsOfWorld(world.secrets), {
    ...meta(revision),
    serveCredentials: world.serveCredentials,
  });
}

/** A new value of one App's Secret (`app` picks it, modulo the Apps; null deletes it). */
export interface Rotation {
  readonly app: number;
  readonly token: string | null;
}

export const rotation: fc.Arbitrary<Rotation> = fc.record({
  app: fc.nat(),
  token: fc.option(secretValue, { nil: null }),
});

/**
 * The world after `change`, and `snapshot` rebuilt for it as the mirror rebuilds for one Secret
 * (src/snapshot/build.ts), with this revision. A world without Apps is left as it is.
 */
export function rotated(
  world: ZeroHopWorld,
  snapshot: Snapshot,
  change: Rotation,
  revision: number,
): { world: ZeroHopWorld; snapshot: Snapshot } {
  if (world.apps.length === 0) return { world, snapshot };
  const name = `${world.apps[change.app % world.apps.length]!.name}-credentials`;
  const secrets = { ...world.secrets };
  if (change.token === null) delete secrets[name];
  else secrets[name] = { token: change.token };
  const next = { ...world, secrets };
  const rebuilt = rebuildForSecrets(
    snapshot,
    [{ namespace: "apps", name }],
    secretsOfWorld(secrets),
    { ...meta(revision), serveCredentials: world.serveCredentials },
  );
  return { world: next, snapshot: rebuilt };
}

const secretsOfWorld = (secrets: ZeroHopWorld["secrets"]) =>
  secretsOf(Object.entries(secrets).map(([name, values]) => [`apps/${name}`, secretData(values)]));

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
