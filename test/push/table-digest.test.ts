import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { caddyRoutes } from "../../src/push/caddy-routes.ts";
import { mapDigest, mapPayloads, REVISION_KEY } from "../../src/push/haproxy-map.ts";
import { shownMapDigest } from "../../src/push/shown-map.ts";
import { tableOf } from "../../src/push/table.ts";
import { canonicalJson, sha256, sortedLinesDigest } from "../../src/push/table-digest.ts";
import { snapshotOf } from "../support/world.ts";

const world = (upstream: string, revision: number) =>
  snapshotOf(
    [
      { name: "blog", hostnames: ["blog.example.com"], upstream: "http://10.0.0.1:80" },
      { name: "shop", hostnames: ["shop.example.com", "*.shop.example.com"], upstream },
    ],
    { "blog-credentials": { token: "t" }, "shop-credentials": { token: "t" } },
    revision,
  );

/** `show map`'s answer for `lines` (`key value`), in the order given, as HAProxy ends it. */
const shown = (lines: readonly string[]) =>
  Buffer.from(
    `${lines.map((l, i) => `0x55d0c0a${i.toString(16).padStart(5, "0")} ${l}`).join("\n")}\n\n`,
  );

const ROUTING = { valueSpaces: false };
/** The routing overlay holding the REVISION of `revision` and nothing else. */
const revisionOnly = (revision: number) => ({ byKey: new Map([[REVISION_KEY, String(revision)]]) });
const CREDENTIALS = { valueSpaces: true };

/** The `key value` lines a push of `view` adds to the map. */
const pushedLines = (view: ReturnType<typeof world>) =>
  [...mapPayloads(view, 1 << 20).payloads].join("").trim().split("\n");

describe("the digests the pusher compares", () => {
  it("digest lines as a set: the same lines in any order agree, one changed value does not", () => {
    const lines = ["b 2", "a 1", "REVISION 3"];
    expect({
      reordered: sortedLinesDigest([...lines].reverse()) === sortedLinesDigest([...lines]),
      changed: sortedLinesDigest(["b 2", "a 9", "REVISION 3"]) === sortedLinesDigest([...lines]),
      known: sortedLinesDigest(["b", "a"]),
    }).toEqual({ reordered: true, changed: false, known: sha256("a\nb\n") });
  });

  it("write JSON with sorted keys, so objects that differ in key order only agree", () => {
    expect([
      canonicalJson({ b: [1, { d: "x", c: null }], a: true, skipped: undefined }),
      canonicalJson([undefined, "é\n"]),
    ]).toEqual(['{"a":true,"b":[1,{"c":null,"d":"x"}]}', '[null,"é\\n"]']);
  });

  it("agree between HAProxy's map read back in any order under its overlay and the view pushed, and tell another table apart", () => {
    const view = world("http://10.0.0.2:8080", 4);
    const other = world("http://10.6.6.6:8080", 5);
    const lines = pushedLines(view);
    const tampered = lines.map((l) => l.replace("10.0.0.2|8080", "10.6.6.6|8080"));
    const overlaid = {
      byKey: revisionOnly(5).byKey,
      byApp: new Map([["shop", "I|shop|10.6.6.6|8080|"]]),
    };
    expect({
      asPushed: shownMapDigest(shown(lines), ROUTING, revisionOnly(4)),
      reversed: shownMapDigest(shown([...lines].reverse()), ROUTING, revisionOnly(4)),
      tampered: shownMapDigest(shown(tampered), ROUTING, revisionOnly(4)) === mapDigest(view),
      overlaid: shownMapDigest(shown(lines), ROUTING, overlaid),
      empty: shownMapDigest(Buffer.alloc(0), ROUTING, revisionOnly(4)),
      required: shownMapDigest(shown(lines), { ...ROUTING, required: REVISION_KEY }),
      notAMap: shownMapDigest(
        Buffer.from("Unknown map identifier. Please use #<id> or <file>.\n"),
        ROUTING,
      ),
    }).toEqual({
      asPushed: mapDigest(view),
      reversed: mapDigest(view),
      tampered: false,
      overlaid: mapDigest(other),
      empty: sortedLinesDigest([`${REVISION_KEY} 4`]),
      required: null,
      notAMap: undefined,
    });
  });

  it("read a map's bytes to the digest of its lines as strings, any order, any value a credential holds", () => {
    const key = fc.stringMatching(/^[a-z0-9][-a-z0-9.]{0,20}$/);
    const value = fc.stringMatching(/^[\x20-\x7e\t]{0,40}$/);
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k }), (entries) => {
        const lines = entries.map(([k, v]) => `${k} ${v}`);
        const spaced = lines.some((l) => /\s/.test(l.slice(l.indexOf(" ") + 1)));
        expect({
          credentials: shownMapDigest(shown(lines), CREDENTIALS),
          reversed: shownMapDigest(shown([...lines].reverse()), CREDENTIALS),
          routing: shownMapDigest(shown(lines), { valueSpaces: false }),
        }).toEqual({
          credentials: sortedLinesDigest([...lines]),
          reversed: sortedLinesDigest([...lines]),
          routing: spaced ? undefined : sortedLinesDigest([...lines]),
        });
      }),
    );
  });

  it("tell Caddy's routes apart by content, not by the order of their objects' keys", () => {
    const routes = caddyRoutes(tableOf(world("http://10.0.0.2:8080", 4)));
    const reordered = JSON.parse(JSON.stringify(routes), (_, v: unknown) =>
      typeof v === "object" && v !== null && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).reverse())
        : v,
    ) as unknown;
    const other = caddyRoutes(tableOf(world("http://10.6.6.6:8080", 4)));
    expect({
      reordered: canonicalJson(reordered) === canonicalJson(routes),
      other: canonicalJson(other) === canonicalJson(routes),
    }).toEqual({ reordered: true, other: false });
  });
});
