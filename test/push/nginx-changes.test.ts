import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nginxChanges } from "../../src/push/nginx-changes.ts";
import { nginxBase, nginxTableBody } from "../../src/push/nginx-table.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";

// 200 Apps: four chunks of the App table (CHUNK_SIZE 64), a credential each.
const apps = Array.from({ length: 200 }, (_, i) => ({
  name: `app-${String(i).padStart(3, "0")}`,
  hostnames: [`app-${i}.example.com`],
  upstream: "http://10.0.0.1:80",
  credential: { prefix: "Bearer " },
}));
const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
/** Each App's token: a value, "" (no credential: the App is not ready), or absent (no Secret). */
type Tokens = ReadonlyMap<number, string | null>;
const secrets = (tokens: Tokens) =>
  secretsOf(
    apps.flatMap((a, i) => {
      const token = tokens.has(i) ? tokens.get(i)! : "t0";
      return token === null ? [] : [[`apps/${a.name}-credentials`, secretData({ token })]];
    }),
  );

/** A whole table body as its lines by key (`<kind> <key>`), the revision line left out. */
function linesByKey(body: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of body.split("\n").slice(1, -1)) {
    const [kind, key] = line.split(" ", 2);
    out.set(`${kind} ${key}`, line);
  }
  return out;
}

/**
 * What a PATCH from `base` to `view` must carry, from the two whole tables alone: every line of
 * `view`'s that is not `base`'s, and an empty credential line for each credential `base` has and
 * `view` has not; sorted, as the order within one kind is the index's.
 */
function expectedLines(base: Snapshot, view: Snapshot): string[] {
  const then = linesByKey(nginxTableBody(base));
  const now = linesByKey(nginxTableBody(view));
  const out: string[] = [];
  for (const [key, line] of now) if (then.get(key) !== line) out.push(line);
  for (const key of then.keys()) if (!now.has(key)) out.push(`${key} `);
  return out.sort();
}

const patchLines = (body: string | null) => body?.split("\n").slice(2, -1).sort() ?? null;

describe("nginx PATCH bodies from one base", () => {
  it("carry every line changed since the base after any sequence of Secret changes, each view compared with the one before", () => {
    const change = fc.record({
      app: fc.integer({ min: 0, max: apps.length - 1 }),
      token: fc.oneof(fc.constantFrom("", null), fc.stringMatching(/^[a-z0-9]{1,8}$/)),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(change, { minLength: 1, maxLength: 4 }), { maxLength: 12 }),
        (steps) => {
          const tokens = new Map<number, string | null>();
          const base = build(registryOf(apps), secrets(tokens), at(1));
          const changes = nginxChanges(nginxBase(base, "5"), 10_000);
          let view = base;
          const seen: (string[] | null)[] = [];
          const wanted: string[][] = [];
          for (const [s, step] of steps.entries()) {
            for (const c of step) tokens.set(c.app, c.token);
            const refs = step.map((c) => ({
              namespace: "apps",
              name: `${apps[c.app]!.name}-credentials`,
            }));
            view = rebuildForSecrets(view, refs, secrets(tokens), at(s + 2));
            seen.push(patchLines(changes(view)));
            wanted.push(expectedLines(base, view));
          }
          expect(seen).toEqual(wanted);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("are null past the most lines, and carry the changes again once fewer changed", () => {
    const base = build(registryOf(apps), secrets(new Map()), at(1));
    const changes = nginxChanges(nginxBase(base, "5"), 3);
    const refs = (...is: number[]) =>
      is.map((i) => ({ namespace: "apps", name: `${apps[i]!.name}-credentials` }));
    const many = rebuildForSecrets(
      base,
      refs(1, 70, 150, 199),
      secrets(
        new Map([
          [1, "a"],
          [70, "b"],
          [150, "c"],
          [199, "d"],
        ]),
      ),
      at(2),
    );
    const back = rebuildForSecrets(
      many,
      refs(70, 150),
      secrets(
        new Map([
          [1, "a"],
          [199, "d"],
        ]),
      ),
      at(3),
    );
    expect([patchLines(changes(many)), patchLines(changes(back))]).toEqual([
      null,
      expectedLines(base, back),
    ]);
  });
});
