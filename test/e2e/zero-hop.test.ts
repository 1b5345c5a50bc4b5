// The routing contract through real HAProxy and Caddy in zero-hop mode: the sidecar keeps each
// proxy's table through its runtime interface, and the proxy answers from it (README, "Zero-hop
// mode"). nginx's Lua variant runs in test/push (it needs libnginx-mod-http-lua).

import { findTool } from "../support/tools.ts";
import { CADDY_ANSWERS, TEXT_ANSWERS } from "../support/zero-hop.ts";
import { startZeroHopCaddy, startZeroHopHaproxy } from "../support/zero-hop-proxies.ts";
import { describeZeroHopDataPlane } from "./contract-zero-hop.ts";

const answersOf = (a: typeof TEXT_ANSWERS) => {
  const plain = ({ status, reason, retryAfter, body }: (typeof a)["notSynced"]) => ({
    status,
    reason,
    retryAfter,
    body,
  });
  return {
    secretUnavailable: plain(a.secretUnavailable),
    notSynced: plain(a.notSynced),
    unknownHost: plain(a.unknownHost),
    badHost: plain(a.badHost),
  };
};

describeZeroHopDataPlane({
  name: "HAProxy runtime-API map",
  binary: findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]),
  start: startZeroHopHaproxy,
  answers: answersOf(TEXT_ANSWERS),
  upstreamHeaders: ["x-mirror-app", "x-mirror-revision"],
});

describeZeroHopDataPlane({
  name: "Caddy admin API",
  binary: findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]),
  start: startZeroHopCaddy,
  answers: answersOf(CADDY_ANSWERS),
  upstreamHeaders: ["x-mirror-app", "x-mirror-revision", "x-mirror-upstream"],
});
