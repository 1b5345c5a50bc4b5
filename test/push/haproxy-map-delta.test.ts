// The routing map's changes between two views of one Registry (src/push/haproxy-map-delta.ts):
// pure, no HAProxy.

import { describe, expect, it } from "vitest";
import { mapLines } from "../../src/push/haproxy-map.ts";
import { changedLines, setCommands } from "../../src/push/haproxy-map-delta.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import { type AppInput, meta, registryOf, secretData, secretsOf } from "../support/world.ts";

// Three chunks of Apps (64 each), each with a hostname and a wildcard.
const apps: AppInput[] = Array.from({ length: 150 }, (_, i) => ({
  name: `app-${String(i).padStart(3, "0")}`,
  hostnames: [`app-${i}.example.com`, `*.w${i}.example.com`],
  upstream: "http://10.0.0.1:8080",
}));
const tokens = new Map(apps.map((a) => [a.name, "t"]));
const secrets = () =>
  secretsOf([...tokens].map(([app, token]) => [`apps/${app}-credentials`, secretData({ token })]));
const first = build(registryOf(apps), secrets(), meta(1));
/** `first` after the Secrets of `names` were emptied, as the mirror rebuilds it. */
const emptied = (names: string[]) => {
  for (const name of names) tokens.set(name, "");
  const refs = names.map((name) => ({ namespace: "apps", name: `${name}-credentials` }));
  const view = rebuildForSecrets(first, refs, secrets(), meta(2));
  for (const name of names) tokens.set(name, "t");
  return view;
};

describe("the routing map's changes", () => {
  it("are the changed Apps' lines, from the chunks whose lines changed only", () => {
    const view = emptied(["app-001", "app-140"]);
    expect(changedLines(mapLines(view), mapLines(first), 64)).toEqual([
      "app-1.example.com S|app-001",
      "w1.example.com/W S|app-001",
      "app-140.example.com S|app-140",
      "w140.example.com/W S|app-140",
    ]);
  });

  it("are none for a view with the same lines, and null past the bound or for another Registry", () => {
    const view = emptied(["app-001", "app-140"]);
    const other = build(registryOf(apps.slice(1)), secrets(), meta(3));
    expect([
      changedLines(mapLines(first), mapLines(first), 0),
      changedLines(mapLines(view), mapLines(first), 4)?.length,
      changedLines(mapLines(view), mapLines(first), 3),
      changedLines(mapLines(other), mapLines(first).slice(0, 2), 64),
    ]).toEqual([[], 4, null, null]);
  });

  it("go as `set map` commands joined by `;` on lines of at most the bytes given, arguments escaped", () => {
    const lines = ["a.example.com S|a", "b.example.com S|b", "c.example.com odd value;x\\"];
    expect(setCommands("/m.map", lines, 70)).toEqual([
      "set map /m.map a.example.com S|a;set map /m.map b.example.com S|b",
      "set map /m.map c.example.com odd\\ value\\;x\\\\",
    ]);
    const many = Array.from({ length: 20 }, (_, i) => `h${i} S|a`);
    expect(setCommands("/m", many, 12_000).map((line) => line.split(";").length)).toEqual([16, 4]);
  });
});
