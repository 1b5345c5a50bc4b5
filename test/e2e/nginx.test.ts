import { startDataPlane, writeShippedConfig } from "../support/data-plane.ts";
import { findTool } from "../support/tools.ts";
import { describeDataPlane, mappedAnswers } from "./contract.ts";

describeDataPlane({
  name: "nginx auth_request",
  binary: findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]),
  async start(nginx, setup) {
    // The README's configuration, as shipped in manifests/base/nginx.conf, with this test's ports
    // and paths: no cluster DNS resolver here, and the upstreams are IP addresses.
    const launch = await writeShippedConfig("nginx", setup);
    return startDataPlane(nginx, launch.args, setup.port, launch.env);
  },
  // @mirror_error: each reason its status and text; any other 500 (no sidecar) stays a 500.
  answers: mappedAnswers("\n", 500),
});
