import { BlockList, isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type LocalAddress, localUpstream } from "../../src/registry/local-upstream.ts";

describe("localUpstream", () => {
  it("names the kind of local address of every spelling a URL parser reads as one", () => {
    const expected: [string, LocalAddress][] = [
      ["http://127.0.0.1:9090", "loopback"],
      ["http://127.9.8.7", "loopback"],
      ["https://localhost:8443/x", "loopback"],
      ["http://localhost.", "loopback"],
      ["http://LOCALHOST:80", "loopback"],
      ["http://local%68ost", "loopback"],
      ["http://ｌｏｃａｌｈｏｓｔ", "loopback"],
      ["http://api.localhost:80", "loopback"],
      ["http://[::1]:9090", "loopback"],
      ["http://[0:0:0:0:0:0:0:1]", "loopback"],
      ["http://[::ffff:127.0.0.1]:9090", "loopback"],
      ["http://[::ffff:7f00:1]", "loopback"],
      ["http://127.1:9090", "loopback"],
      ["http://0x7f.1", "loopback"],
      ["http://2130706433:9090", "loopback"],
      ["http://017700000001", "loopback"],
      ["http://127.0.0.1.:80", "loopback"],
      ["http://user@127.0.0.1:9090", "loopback"],
      ["HTTP://127.0.0.1", "loopback"],
      ["http:127.0.0.1:9090", "loopback"],
      ["http://127.0.0.\t1", "loopback"],
      ["h2c://127.1:9090", "loopback"],
      ["tcp://LOCALHOST:9090", "loopback"],
      ["127.0.0.1:9090", "loopback"],
      ["localhost:9090", "loopback"],
      ["//127.1:9090", "loopback"],
      ["http://unix:80", "loopback"],
      ["http://UNIX.:80", "loopback"],
      ["http://0.0.0.0:9090", "unspecified"],
      ["http://0", "unspecified"],
      ["http://0.1.2.3", "unspecified"],
      ["http://[::]:9090", "unspecified"],
      ["http://169.254.169.254/latest/meta-data", "link-local"],
      ["http://2852039166", "link-local"],
      ["http://[fe80::1]", "link-local"],
      ["http://[febf::1]", "link-local"],
      ["http://[::ffff:169.254.169.254]", "link-local"],
    ];
    expect(expected.map(([u]) => [u, localUpstream(u)])).toEqual(expected);
  });

  it("admits private, cluster and public addresses and names, and values naming no host", () => {
    const upstreams = [
      "http://shop.tenant-a.svc.cluster.local:8080",
      "http://10.0.0.12:8080",
      "http://10.96.0.10",
      "http://172.16.4.2",
      "http://192.168.1.1",
      "https://api.example.com/v1",
      "http://[fd00::1]",
      "http://[fec0::1]",
      "http://[2001:db8::1]",
      "http://128.0.0.1",
      "http://169.255.0.1",
      "http://localhost.example.com",
      "http://mylocalhost",
      "http://shop:8080",
      "shop:8080",
      "http://127.0.0.1:99999",
      "http://a.0x",
      "not a url",
      "",
    ];
    expect(upstreams.filter((u) => localUpstream(u) !== null)).toEqual([]);
  });
});

// The rule stated plainly: the host a WHATWG parser reads (opaque hosts read as http hosts, a
// value without an authority read as one), checked against Node's own subnet matcher.
const SUBNETS: Readonly<Record<LocalAddress, readonly [string, number, "ipv4" | "ipv6"][]>> = {
  loopback: [
    ["127.0.0.0", 8, "ipv4"],
    ["::1", 128, "ipv6"],
    ["::7f00:0", 104, "ipv6"],
  ],
  unspecified: [
    ["0.0.0.0", 8, "ipv4"],
    ["::", 104, "ipv6"],
  ],
  "link-local": [
    ["169.254.0.0", 16, "ipv4"],
    ["fe80::", 10, "ipv6"],
    ["::a9fe:0", 112, "ipv6"],
  ],
};
const LISTS = Object.entries(SUBNETS).map(([kind, subnets]) => {
  const list = new BlockList();
  for (const [address, prefix, type] of subnets) list.addSubnet(address, prefix, type);
  return [kind as LocalAddress, list] as const;
});

function referenceHost(upstream: string): string | null {
  const url = URL.parse(upstream);
  if (url !== null && url.hostname !== "")
    return URL.parse(`http://${url.hostname}`)?.hostname ?? url.hostname.toLowerCase();
  if (upstream.includes("//") && !upstream.startsWith("//")) return null;
  const bare = URL.parse(upstream.startsWith("//") ? `http:${upstream}` : `http://${upstream}`);
  return bare?.hostname || null;
}

function reference(upstream: string): LocalAddress | null {
  const host = referenceHost(upstream);
  if (host === null) return null;
  const address = host.replace(/^\[|\]$/g, "");
  const type = isIP(address);
  if (type !== 0) {
    const family = type === 4 ? "ipv4" : "ipv6";
    return LISTS.find(([, list]) => list.check(address, family))?.[0] ?? null;
  }
  const name = host.replace(/\.+$/, "");
  return name === "localhost" || name.endsWith(".localhost") ? "loopback" : null;
}

describe("localUpstream, against a plain statement of the rule", () => {
  const host = fc.oneof(
    fc.constantFrom(
      "shop",
      "shop.svc",
      "localhost",
      "LocalHost",
      "x.localhost",
      "localhost.",
      "127.0.0.1",
      "127.1",
      "0x7f.1",
      "0x7F.0.0.1",
      "2130706433",
      "017700000001",
      "0",
      "0.0.0.0",
      "169.254.169.254",
      "10.0.0.12",
      "1.2.3.4",
      "a.0x",
      "a.12",
      "0x",
      "[::1]",
      "[::]",
      "[::ffff:127.0.0.1]",
      "[::ffff:a9fe:a9fe]",
      "[fe80::1]",
      "[fd00::1]",
      "[::127.0.0.1]",
      "%6cocalhost",
    ),
    fc.stringMatching(/^[a-z0-9.-]{1,12}$/),
    fc.stringMatching(/^[0-9x.]{1,12}$/),
  );
  const upstream = fc
    .tuple(
      fc.constantFrom("http://", "https://", "HTTP://", "h2c://", "//", "", "http:", "ws://"),
      fc.option(fc.constantFrom("user@", "a:b@"), { nil: "" }),
      host,
      fc.constantFrom("", ":80", ":8080", ":99999", ":", ":x"),
      fc.constantFrom("", "/", "/v1?x=1", "#f", "?q", " x", "@10.0.0.1"),
    )
    .map((parts) => parts.join(""));

  it("judges every generated upstream as the plain statement does", () => {
    fc.assert(
      fc.property(upstream, (u) => {
        expect(localUpstream(u)).toBe(reference(u));
      }),
      { numRuns: 5000 },
    );
  });
});
