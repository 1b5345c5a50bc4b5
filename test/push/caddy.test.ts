import { expect } from "vitest";
import { caddyTarget } from "../../src/push/caddy-target.ts";
import { ok } from "../../src/result.ts";
import { findTool } from "../support/tools.ts";
import { CADDY_ANSWERS } from "../support/zero-hop.ts";
import { goRefusesHost, startZeroHopCaddy } from "../support/zero-hop-proxies.ts";
import { describePushChannel } from "./push-channel-suite.ts";
import { describeZeroHop } from "./zero-hop-suite.ts";

const caddy = findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]);

describeZeroHop({
  name: "Caddy admin API",
  binary: caddy,
  start: startZeroHopCaddy,
  answers: CADDY_ANSWERS,
  parserRefuses: goRefusesHost,
  // Every push is a reload of Caddy's whole configuration.
  runs: 25,
});

describePushChannel({
  name: "Caddy admin API",
  binary: caddy,
  start: startZeroHopCaddy,
  // A PATCH of the server's routes under the same revision, from another client of the socket.
  async tamper({ proxy, forged }) {
    expect(await caddyTarget({ socket: proxy.socket }).push(forged)).toEqual(ok(undefined));
  },
});
