import { describe, expect, it } from "vitest";
import { isLoopbackPeer } from "../../src/ops/loopback-peer.ts";

describe("isLoopbackPeer", () => {
  it("takes 127.0.0.0/8, ::1 and IPv4 loopback mapped into IPv6, and nothing else", () => {
    const addresses = [
      "127.0.0.1",
      "127.0.0.2",
      "127.255.255.254",
      "::1",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
      "::ffff:127.8.0.1",
      "::ffff:7f00:1",
      // Not loopback: the pod network, neighbours of 127/8, unspecified and other IPv6 forms.
      "128.0.0.1",
      "126.255.255.255",
      "10.0.0.7",
      "192.0.2.2",
      "0.0.0.0",
      "::",
      "::2",
      "::ffff:10.0.0.7",
      "::127.0.0.1",
      "64:ff9b::127.0.0.1",
      "fd00::2",
      "fe80::1%eth0",
      // Not an address at all: a host name, an address with a port, none.
      "localhost",
      "127.0.0.1:9090",
      "",
      undefined,
    ];
    expect(addresses.map((a) => [a, isLoopbackPeer(a)])).toEqual([
      ["127.0.0.1", true],
      ["127.0.0.2", true],
      ["127.255.255.254", true],
      ["::1", true],
      ["0:0:0:0:0:0:0:1", true],
      ["::ffff:127.0.0.1", true],
      ["::ffff:127.8.0.1", true],
      ["::ffff:7f00:1", true],
      ["128.0.0.1", false],
      ["126.255.255.255", false],
      ["10.0.0.7", false],
      ["192.0.2.2", false],
      ["0.0.0.0", false],
      ["::", false],
      ["::2", false],
      ["::ffff:10.0.0.7", false],
      ["::127.0.0.1", false],
      ["64:ff9b::127.0.0.1", false],
      ["fd00::2", false],
      ["fe80::1%eth0", false],
      ["localhost", false],
      ["127.0.0.1:9090", false],
      ["", false],
      [undefined, false],
    ]);
  });
});
