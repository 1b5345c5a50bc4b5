// The routing contract through real HAProxy and Caddy in zero-hop mode: the sidecar keeps each
// proxy's table through its runtime interface, and the proxy answers from it (README, "Zero-hop
// mode"), the credential cases of hop mode (ADR 53) among them. nginx's Lua variant runs in
// test/push (it needs libnginx-mod-http-lua).

import { findTool, type Tool } from "../support/tools.ts";
import { CADDY_ANSWERS, type RefusedAnswers, TEXT_ANSWERS } from "../support/zero-hop.ts";
import {
  startZeroHopCaddy,
  startZeroHopHaproxy,
  type ZeroHopProxy,
} from "../support/zero-hop-proxies.ts";
import type { MirrorHeader } from "./contract-trust.ts";
import { describeZeroHopDataPlane } from "./contract-zero-hop.ts";

const plain = ({ status, reason, retryAfter, body }: RefusedAnswers["notSynced"]) => ({
  status,
  reason,
  retryAfter,
  body,
});
const answersOf = (a: RefusedAnswers) => ({
  secretUnavailable: plain(a.secretUnavailable),
  secretUnusable: plain(a.secretUnusable),
  credentialsOff: plain(a.credentialsOff),
  notSynced: plain(a.notSynced),
  unknownHost: plain(a.unknownHost),
  badHost: plain(a.badHost),
});

interface ZeroHopSpec {
  readonly name: string;
  readonly binary: Tool;
  start(binary: string, dir: string): Promise<ZeroHopProxy>;
  readonly answers: RefusedAnswers;
  readonly upstreamHeaders: readonly MirrorHeader[];
}

const SPECS: readonly ZeroHopSpec[] = [
  {
    name: "HAProxy runtime-API map",
    binary: findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]),
    start: startZeroHopHaproxy,
    answers: TEXT_ANSWERS,
    upstreamHeaders: ["x-mirror-app", "x-mirror-revision"],
  },
  {
    name: "Caddy admin API",
    binary: findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]),
    start: startZeroHopCaddy,
    answers: CADDY_ANSWERS,
    upstreamHeaders: ["x-mirror-app", "x-mirror-revision", "x-mirror-upstream"],
  },
];

for (const spec of SPECS) {
  describeZeroHopDataPlane({ ...spec, answers: answersOf(spec.answers) });
}
