import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { caddyRoutes } from "../../src/push/caddy-routes.ts";
import { mapDigest, mapPayloads, REVISION_KEY } from "../../src/push/haproxy-map.ts";
import { addBytes, addLine, noLines, sumText } from "../../src/push/line-sum.ts";
import { shownMapDigest } from "../../src/push/shown-map.ts";
import { tableOf } from "../../src/push/table.ts";
import { canonicalJson } from "../../src/push/table-digest.ts";
import { snapshotOf } from "../support/world.ts";

/** The digest of `lines` as a pushed view's is computed. */
const sumOf = (lines: readonly string[]) => {
  const sum = noLines();
  for (const line of lines) addLine(sum, line);
  return sumText(sum);
};

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
  it("digest lines as a multiset: the same lines in any order agree; one changed, lost, added or moved between lines does not", () => {
    const lines = ["b 2", "a 1", "REVISION 3"];
    const asBytes = (ls: readonly string[]) => {
      const sum = noLines();
      for (const l of ls) addBytes(sum, Buffer.from(l, "latin1"), 0, l.length);
      return sumText(sum);
    };
    expect({
      reordered: sumOf([...lines].reverse()) === sumOf(lines),
      bytes: asBytes(lines) === sumOf(lines),
      changed: sumOf(["b 2", "a 9", "REVISION 3"]) === sumOf(lines),
      lost: sumOf(["b 2", "a 1"]) === sumOf(lines),
      added: sumOf([...lines, "c 3"]) === sumOf(lines),
      moved: sumOf(["b 21", "a ", "REVISION 3"]) === sumOf(lines),
      empty: sumOf([]),
    }).toEqual({
      reordered: true,
      bytes: true,
      changed: false,
      lost: false,
      added: false,
      moved: false,
      empty: "0:0:0",
    });
  });

  it("write JSON with sorted keys, so objects that differ in key order only agree", () => {
    expect([
      canonicalJson({ b: [1, { d: "x", c: null }], a: true, skipped: undefined }),
      canonicalJson([undefined, "é\n"]),
    ]).toEqual(['{"a":true,"b":[1,{"c":null,"d":"x"}]}', '[null,"é\\n"]']);
  });

  it("agree between HAProxy's map read back in any order under its overlay and the view pushed, and tell another table apart", async () => {
    const view = world("http://10.0.0.2:8080", 4);
    const other = world("http://10.6.6.6:8080", 5);
    const lines = pushedLines(view);
    const tampered = lines.map((l) => l.replace("10.0.0.2|8080", "10.6.6.6|8080"));
    const overlaid = {
      byKey: revisionOnly(5).byKey,
      byApp: new Map([["shop", "I|shop|10.6.6.6|8080|"]]),
    };
    expect({
      asPushed: await shownMapDigest(shown(lines), ROUTING, revisionOnly(4)),
      reversed: await shownMapDigest(shown([...lines].reverse()), ROUTING, revisionOnly(4)),
      tampered:
        (await shownMapDigest(shown(tampered), ROUTING, revisionOnly(4))) === mapDigest(view),
      overlaid: await shownMapDigest(shown(lines), ROUTING, overlaid),
      empty: await shownMapDigest(Buffer.alloc(0), ROUTING, revisionOnly(4)),
      required: await shownMapDigest(shown(lines), { ...ROUTING, required: REVISION_KEY }),
      notAMap: await shownMapDigest(
        Buffer.from("Unknown map identifier. Please use #<id> or <file>.\n"),
        ROUTING,
      ),
    }).toEqual({
      asPushed: mapDigest(view),
      reversed: mapDigest(view),
      tampered: false,
      overlaid: mapDigest(other),
      empty: sumOf([`${REVISION_KEY} 4`]),
      required: null,
      notAMap: undefined,
    });
  });

  it("read a map's bytes to the digest of its lines as strings, any order, any value a credential holds", async () => {
    const key = fc.stringMatching(/^[a-z0-9][-a-z0-9.]{0,20}$/);
    const value = fc.stringMatching(/^[\x20-\x7e\t]{0,40}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k }),
        async (entries) => {
          const lines = entries.map(([k, v]) => `${k} ${v}`);
          const spaced = lines.some((l) => /\s/.test(l.slice(l.indexOf(" ") + 1)));
          expect({
            credentials: await shownMapDigest(shown(lines), CREDENTIALS),
            reversed: await shownMapDigest(shown([...lines].reverse()), CREDENTIALS),
            routing: await shownMapDigest(shown(lines), { valueSpaces: false }),
          }).toEqual({
            credentials: sumOf(lines),
            reversed: sumOf(lines),
            routing: spaced ? undefined : sumOf(lines),
          });
        },
      ),
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
