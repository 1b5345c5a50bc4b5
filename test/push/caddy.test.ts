import { findTool } from "../support/tools.ts";
import { CADDY_ANSWERS } from "../support/zero-hop.ts";
import { goRefusesHost, startZeroHopCaddy } from "../support/zero-hop-proxies.ts";
import { describeZeroHop } from "./zero-hop-suite.ts";

describeZeroHop({
  name: "Caddy admin API",
  binary: findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]),
  start: startZeroHopCaddy,
  answers: CADDY_ANSWERS,
  parserRefuses: goRefusesHost,
  // Every push is a reload of Caddy's whole configuration.
  runs: 25,
});
