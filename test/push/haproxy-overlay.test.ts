// The routing map's changes between two views of one Registry, as overlay entries
// (src/push/haproxy-overlay.ts): pure, no HAProxy.

import { describe, expect, it } from "vitest";
import { mapLines } from "../../src/push/haproxy-map.ts";
import { appOf, changedApps, overlayCommands, overlayOf } from "../../src/push/haproxy-overlay.ts";
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
  it("are the changed Apps' entries, one per App, from the chunks whose lines changed only", () => {
    const view = emptied(["app-001", "app-140"]);
    expect(changedApps(mapLines(view), mapLines(first), 64)).toEqual(
      new Map([
        ["app-001", "S|app-001"],
        ["app-140", "S|app-140"],
      ]),
    );
  });

  it("are none for a view with the same lines, and null past the bound or for another Registry", () => {
    const view = emptied(["app-001", "app-140"]);
    const other = build(registryOf(apps.slice(1)), secrets(), meta(3));
    expect([
      changedApps(mapLines(first), mapLines(first), 0),
      changedApps(mapLines(view), mapLines(first), 2)?.size,
      changedApps(mapLines(view), mapLines(first), 1),
      changedApps(mapLines(other), mapLines(first).slice(0, 2), 64),
    ]).toEqual([new Map(), 2, null, null]);
  });

  it("name their App in the entry's second field", () => {
    expect(["I|a|10.0.0.1|80|c", "N|b", "S|c-d", "x"].map(appOf)).toEqual(["a", "b", "c-d", ""]);
  });

  it("go in their order as `set map` for keys held and `add map` for the others, joined by `;` on lines of at most the bytes given, arguments escaped", () => {
    const entries = new Map([
      ["a", "S|a"],
      ["b", "S|b"],
      ["c", "odd value;x\\"],
      ["REVISION", "7"],
    ]);
    const held = (key: string) => key !== "b";
    expect(overlayCommands("/m.map", entries, held, 60)).toEqual([
      "set map /m.map a S|a;add map /m.map b S|b",
      "set map /m.map c odd\\ value\\;x\\\\;set map /m.map REVISION 7",
    ]);
    const many = new Map(Array.from({ length: 70 }, (_, i) => [`a${i}`, "S|a"]));
    const lines = overlayCommands("/m", many, () => true, 12_000);
    expect(lines.map((line) => line.split(";").length)).toEqual([64, 6]);
  });

  it("go into the overlay beside each map haproxy.cfg names", () => {
    expect([overlayOf("/etc/h/replica-mirror.map"), overlayOf("/etc/h/table")]).toEqual([
      "/etc/h/replica-mirror-overlay.map",
      "/etc/h/table-overlay",
    ]);
  });
});
