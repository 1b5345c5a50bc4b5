import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CredentialLines,
  credentialChanges,
  credentialLines,
} from "../../src/push/credential-lines.ts";
import { routingTable } from "../../src/push/table.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { meta, registryOf, secretData, secretsOf } from "../support/world.ts";
import { credentialDigest } from "../support/zero-hop.ts";
import {
  rotated,
  rotation,
  snapshotOfWorld,
  zeroHopWorld,
} from "../support/zero-hop-arbitraries.ts";

const UPSTREAMS = ["http://10.0.0.1:8080", "http://shop.svc:80/", "https://tls.example"];
const format = (credential: string) => credentialDigest(credential);

/** The side table the table's entries call for: every App routed to a host with a credential. */
function expected(snapshot: Snapshot): Record<string, string> {
  const table = routingTable(snapshot);
  const out: Record<string, string> = {};
  for (const entry of [...table.exact.values(), ...table.wildcard.values()]) {
    if (entry.kind === "routed" && entry.target !== null && entry.credential !== null)
      out[entry.app] = format(entry.credential);
  }
  return out;
}

const flat = (lines: CredentialLines) =>
  Object.fromEntries(lines.flat().map((l) => [l.app, l.value]));

/** `then`'s side table with `changes` applied, as a proxy writing and deleting keys holds it. */
function applied(then: CredentialLines, now: CredentialLines): Record<string, string> {
  const held = flat(then);
  const changes = credentialChanges(now, then);
  for (const line of changes.written) {
    if (changes.added.has(line.app) === Object.hasOwn(held, line.app)) throw new Error("added?");
    held[line.app] = line.value;
  }
  for (const app of changes.dropped) delete held[app];
  return held;
}

describe("the credentials side table", () => {
  it("holds each App the table routes with a credential, once, and its changes lead from one table to the next", () => {
    fc.assert(
      fc.property(
        zeroHopWorld(UPSTREAMS),
        fc.array(rotation, { maxLength: 6 }),
        (first, changes) => {
          let now = { world: first, snapshot: snapshotOfWorld(first, 1) };
          let lines = credentialLines(now.snapshot, format);
          expect(flat(lines)).toEqual(expected(now.snapshot));
          for (const [i, change] of changes.entries()) {
            now = rotated(now.world, now.snapshot, change, i + 2);
            const next = credentialLines(now.snapshot, format);
            expect({ lines: flat(next), applied: applied(lines, next) }).toEqual({
              lines: expected(now.snapshot),
              applied: expected(now.snapshot),
            });
            lines = next;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps a chunk's list across a Secret change elsewhere, and compares every App after a Registry change", () => {
    const apps = Array.from({ length: 130 }, (_, i) => ({
      name: `app-${String(i).padStart(3, "0")}`,
      hostnames: [`app-${i}.example.com`],
      upstream: "http://10.0.0.1:80",
      credential: { prefix: "Bearer " },
    }));
    const tokens = new Map(apps.map((a) => [`${a.name}-credentials`, "t"]));
    const secrets = () =>
      secretsOf([...tokens].map(([n, token]) => [`apps/${n}`, secretData({ token })]));
    const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
    const before = build(registryOf(apps), secrets(), at(1));
    tokens.set("app-100-credentials", "u");
    const ref = { namespace: "apps", name: "app-100-credentials" };
    const after = rebuildForSecrets(before, [ref], secrets(), at(2));
    const moved = build(registryOf(apps.slice(1)), secrets(), at(3));
    const [b, a, m] = [before, after, moved].map((s) => credentialLines(s, format));
    const summary = (c: ReturnType<typeof credentialChanges>) => ({
      written: c.written.map((l) => l.app),
      added: [...c.added],
      dropped: c.dropped,
    });
    expect({
      shared: a!.map((chunk, i) => chunk === b![i]),
      rotated: summary(credentialChanges(a!, b!)),
      registry: summary(credentialChanges(m!, a!)),
    }).toEqual({
      shared: [true, false, true],
      rotated: { written: ["app-100"], added: [], dropped: [] },
      registry: { written: [], added: [], dropped: ["app-000"] },
    });
  });
});
