import { describe, expect, it } from "vitest";
import {
  type NginxBase,
  nginxChangesBody,
  nginxLines,
  nginxTableBody,
} from "../../src/push/nginx-table.ts";
import { rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { meta, secretData, secretsOf, snapshotOf } from "../support/world.ts";

const apps = Array.from({ length: 130 }, (_, i) => ({
  name: `app-${String(i).padStart(3, "0")}`,
  hostnames: [`app-${i}.example.com`],
  upstream: "http://10.0.0.1:80",
}));
const names = apps.map((a) => `${a.name}-credentials`);
const ready = (except: readonly string[]) =>
  secretsOf(
    names.filter((n) => !except.includes(n)).map((n) => [`apps/${n}`, secretData({ token: "t" })]),
  );
const whole = snapshotOf(apps, Object.fromEntries(names.map((n) => [n, { token: "t" }])), 1);
const baseOf = (s: Snapshot): NginxBase => ({
  routes: s.routes,
  lines: nginxLines(s),
  generation: "7",
});
const refs = (...ns: string[]) => ns.map((name) => ({ namespace: "apps", name }));

describe("the nginx changes body", () => {
  it("holds every line changed since the base, not only since the last push", () => {
    const one = rebuildForSecrets(
      whole,
      refs("app-003-credentials"),
      ready(["app-003-credentials"]),
      meta(2),
    );
    const two = rebuildForSecrets(
      one,
      refs("app-100-credentials"),
      ready(["app-003-credentials", "app-100-credentials"]),
      meta(3),
    );
    expect(nginxChangesBody(two, baseOf(whole), 100)).toBe(
      [
        "revision 3",
        "base 7",
        "= app-3.example.com S|app-003",
        "= app-100.example.com S|app-100",
        "",
      ].join("\n"),
    );
  });

  it("is empty of lines when no line changed, and null past the most lines or for other hostnames", () => {
    const same = rebuildForSecrets(whole, refs("app-003-credentials"), ready([]), meta(2));
    const many = rebuildForSecrets(whole, refs(...names), ready(names.slice(0, 3)), meta(3));
    const other = snapshotOf(apps, {}, 4);
    // The body's lines, the entries sorted: their order within a chunk is the index's.
    const read = (body: string | null) => {
      if (body === null) return null;
      const [revision, base, ...lines] = body.split("\n");
      return { revision, base, lines: lines.sort() };
    };
    expect(
      [
        nginxChangesBody(same, baseOf(whole), 100),
        nginxChangesBody(many, baseOf(whole), 3),
        nginxChangesBody(many, baseOf(whole), 2),
        nginxChangesBody(other, baseOf(whole), 1_000),
      ].map(read),
    ).toEqual([
      { revision: "revision 2", base: "base 7", lines: [""] },
      {
        revision: "revision 3",
        base: "base 7",
        lines: [
          "",
          "= app-0.example.com S|app-000",
          "= app-1.example.com S|app-001",
          "= app-2.example.com S|app-002",
        ],
      },
      null,
      null,
    ]);
  });

  it("starts the whole table with its revision and holds every hostname", () => {
    const body = nginxTableBody(whole);
    expect({ head: body.split("\n", 1)[0], lines: body.split("\n").length - 2 }).toEqual({
      head: "revision 1",
      lines: 130,
    });
  });
});
