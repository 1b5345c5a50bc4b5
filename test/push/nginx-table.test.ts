import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { nginxChangesBody } from "../../src/push/nginx-changes.ts";
import { nginxTableDigest, nginxTableDigestSliced } from "../../src/push/nginx-digest.ts";
import { type NginxBase, nginxBase, nginxTableBody } from "../../src/push/nginx-table.ts";
import { build, rebuildForSecrets } from "../../src/snapshot/build.ts";
import type { Snapshot } from "../../src/snapshot/types.ts";
import { meta, registryOf, secretData, secretsOf, snapshotOf } from "../support/world.ts";
import { redactedLine } from "../support/zero-hop.ts";

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
const baseOf = (s: Snapshot): NginxBase => nginxBase(s, "7");
const refs = (...ns: string[]) => ns.map((name) => ({ namespace: "apps", name }));

describe("the nginx table digest", () => {
  it("is the same hashed in slices as at once, for every view, and tells views apart", async () => {
    const credentialed = build(
      registryOf(apps.map((a) => ({ ...a, credential: { prefix: "Bearer " } }))),
      ready([]),
      { ...meta(5), serveCredentials: true },
    );
    const changed = rebuildForSecrets(
      whole,
      refs("app-003-credentials"),
      ready(["app-003-credentials"]),
      meta(2),
    );
    const views = [whole, changed, credentialed];
    const sliced = await Promise.all(views.map(nginxTableDigestSliced));
    expect({
      same: sliced,
      distinct: new Set(sliced).size,
    }).toEqual({ same: views.map(nginxTableDigest), distinct: 3 });
  });

  it("counts and sums the CRC-32 of the whole body's lines, in whatever order nginx reads them", () => {
    const lines = nginxTableBody(whole).split("\n").slice(0, -1).reverse();
    const crcs = lines.map((line) => crc32(line));
    const hex = (n: number) => n.toString(16).padStart(8, "0");
    const a = crcs.reduce((s, h) => (s + h) >>> 0, 0);
    const b = crcs.reduce((s, h) => (s + Math.imul(h, h)) >>> 0, 0);
    expect(nginxTableDigest(whole)).toBe(`${lines.length}:${hex(a)}:${hex(b)}`);
  });
});

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

  it("carries a rotated credential as its App's credential line only, no entry", () => {
    const keyed = apps.map((a) => ({ ...a, credential: { prefix: "Bearer " } }));
    const tokens = (rotated: string) =>
      secretsOf(
        names.map((n) => [`apps/${n}`, secretData({ token: n === rotated ? "new|1" : "t" })]),
      );
    const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
    const before = build(registryOf(keyed), tokens(""), at(1));
    const after = rebuildForSecrets(
      before,
      refs("app-100-credentials"),
      tokens("app-100-credentials"),
      at(2),
    );
    expect(nginxChangesBody(after, baseOf(before), 100)?.split("\n").map(redactedLine)).toEqual(
      ["revision 2", "base 7", "c app-100 Bearer new|1", ""].map(redactedLine),
    );
  });

  it("empties the credential line of an App that lost its credential, and adds one for an App that gained one", () => {
    const keyed = apps.map((a) => ({ ...a, credential: { prefix: "Bearer " } }));
    const at = (revision: number) => ({ ...meta(revision), serveCredentials: true });
    const before = build(registryOf(keyed), ready(["app-120-credentials"]), at(1));
    const after = rebuildForSecrets(
      before,
      refs("app-003-credentials", "app-120-credentials"),
      ready(["app-003-credentials"]),
      at(2),
    );
    expect(nginxChangesBody(after, baseOf(before), 100)?.split("\n").map(redactedLine)).toEqual(
      [
        "revision 2",
        "base 7",
        "= app-3.example.com S|app-003",
        "= app-120.example.com I|app-120|10.0.0.1|80|c|http://10.0.0.1:80",
        "c app-120 Bearer t",
        "c app-003 ",
        "",
      ].map(redactedLine),
    );
  });

  it("starts the whole table with its revision and holds every hostname", () => {
    const body = nginxTableBody(whole);
    expect({ head: body.split("\n", 1)[0], lines: body.split("\n").length - 2 }).toEqual({
      head: "revision 1",
      lines: 130,
    });
  });
});

describe("the nginx table body", () => {
  const apps = [
    {
      name: "c",
      hostnames: ["c.example.com", "*.x.c.example.com"],
      upstream: "http://10.0.0.3:8080",
      credential: { prefix: "Bearer " },
    },
    { name: "a", hostnames: ["a.example.com", "*.example.com"], upstream: "http://a.svc/" },
    { name: "b", hostnames: ["b.example.com"] },
    { name: "u", hostnames: ["u.example.com"], upstream: "http://u.svc", credential: {} },
  ];
  const secrets = secretsOf([
    ["apps/a-credentials", secretData({ token: "t" })],
    ["apps/c-credentials", secretData({ token: "k|1 \t{x}\n" })],
    ["apps/u-credentials", secretData({ token: "x\ry" })],
  ]);
  it("starts with the revision, then one line per hostname, then per wildcard suffix, none with the revision, then each credential once, as it is", () => {
    const snapshot = build(registryOf(apps), secrets, { ...meta(9), serveCredentials: true });
    expect(nginxTableBody(snapshot).split("\n").map(redactedLine)).toEqual(
      [
        "revision 9",
        "= u.example.com U|u",
        "= c.example.com I|c|10.0.0.3|8080|c|http://10.0.0.3:8080",
        "= b.example.com S|b",
        "= a.example.com D|a|a.svc|80||http://a.svc/",
        "* x.c.example.com I|c|10.0.0.3|8080|c|http://10.0.0.3:8080",
        "* example.com D|a|a.svc|80||http://a.svc/",
        "c c Bearer k|1 \t{x}",
        "",
      ].map(redactedLine),
    );
  });

  it("answers every App with a credential credentials-off when they are not served", () => {
    const snapshot = build(registryOf(apps), secrets, meta(9));
    expect(
      nginxTableBody(snapshot)
        .split("\n")
        .filter((l) => l.includes(" O|")),
    ).toEqual(["= u.example.com O|u", "= c.example.com O|c", "* x.c.example.com O|c"]);
  });
});
