import { BlockList, isIPv4, isIPv6 } from "node:net";

// Node's BlockList parses every spelling of an address (`0:0:0:0:0:0:0:1`, `::ffff:7f00:1`) and
// matches an IPv4-mapped IPv6 address against an IPv4 subnet.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/**
 * Whether a connection's remote address (`socket.remoteAddress`) is this host's loopback: in
 * 127.0.0.0/8, `::1`, or an IPv4 one of those mapped into IPv6 (`::ffff:127.0.0.1`, which a
 * dual-stack listener on `::` reports). Anything else, including no address (a socket already
 * closed) and the unspecified `::` and `0.0.0.0`, is not.
 */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (isIPv4(address)) return LOOPBACK.check(address, "ipv4");
  if (isIPv6(address)) return LOOPBACK.check(address, "ipv6");
  return false;
}
