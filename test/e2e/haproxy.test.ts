import { startDataPlane, writeShippedConfig } from "../support/data-plane.ts";
import { findTool } from "../support/tools.ts";
import { describeDataPlane, mappedAnswers } from "./contract.ts";

describeDataPlane({
  name: "HAProxy Lua httpclient",
  binary: findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]),
  async start(haproxy, setup) {
    // The shipped haproxy.cfg and Lua file with this test's paths and ports. The upstreams are
    // IP addresses, so the cluster-dns resolvers section is never asked.
    const launch = await writeShippedConfig("haproxy", setup);
    return startDataPlane(haproxy, launch.args, setup.port, launch.env);
  },
  // `http-request return` per reason; no answer from the sidecar, or another one, is a 502.
  answers: mappedAnswers("", 502),
});
