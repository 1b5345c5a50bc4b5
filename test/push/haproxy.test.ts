import { findTool } from "../support/tools.ts";
import { startZeroHopHaproxy, TEXT_ANSWERS } from "../support/zero-hop.ts";
import { describeZeroHop } from "./zero-hop-suite.ts";

describeZeroHop({
  name: "HAProxy runtime-API maps",
  binary: findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]),
  start: startZeroHopHaproxy,
  // The hop configuration's answers (manifests/data-planes/haproxy/haproxy.cfg).
  answers: TEXT_ANSWERS,
});
