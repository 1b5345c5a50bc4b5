import { expect } from "vitest";
import { nginxTarget } from "../../src/push/nginx-target.ts";
import { ok } from "../../src/result.ts";
import { findTool } from "../support/tools.ts";
import { NGINX_ANSWERS } from "../support/zero-hop.ts";
import { nginxRefusesHost, startZeroHopNginx } from "../support/zero-hop-proxies.ts";
import { describePushChannel } from "./push-channel-suite.ts";
import { describeZeroHop } from "./zero-hop-suite.ts";

const nginx = findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]);

describeZeroHop({
  name: "nginx Lua shared dict",
  binary: nginx,
  start: startZeroHopNginx,
  answers: NGINX_ANSWERS,
  parserRefuses: nginxRefusesHost,
});

describePushChannel({
  name: "nginx push listener",
  binary: nginx,
  start: startZeroHopNginx,
  // A PUT of a whole table under the same revision, from another client of the socket.
  async tamper({ proxy, forged }) {
    expect(await nginxTarget({ socket: proxy.socket }).push(forged)).toEqual(ok(undefined));
  },
});
