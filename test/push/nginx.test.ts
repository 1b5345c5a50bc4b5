import { findTool } from "../support/tools.ts";
import { NGINX_ANSWERS } from "../support/zero-hop.ts";
import { nginxRefusesHost, startZeroHopNginx } from "../support/zero-hop-proxies.ts";
import { describeZeroHop } from "./zero-hop-suite.ts";

describeZeroHop({
  name: "nginx Lua shared dict",
  binary: findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]),
  start: startZeroHopNginx,
  answers: NGINX_ANSWERS,
  parserRefuses: nginxRefusesHost,
});
