import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startDataPlane } from "../support/data-plane.ts";
import { findTool } from "../support/tools.ts";
import { describeDataPlane, mappedAnswers } from "./contract.ts";

describeDataPlane({
  name: "nginx auth_request",
  binary: findTool("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"], ["-v"]),
  async start(nginx, { port, dir, sidecarPort }) {
    // The README's configuration, as shipped in manifests/base/nginx.conf, with this test's ports
    // and paths: no cluster DNS resolver here, and the upstreams are IP addresses.
    const conf = (await readFile("manifests/base/nginx.conf", "utf8"))
      .replaceAll("/tmp/", `${dir}/`)
      .replace(/^\s*resolver .*$/m, "")
      // The test's stderr is a socket, which nginx cannot open as /dev/stderr.
      .replace("error_log /dev/stderr warn;", `error_log ${dir}/error.log warn;`)
      .replace("listen 8000;", `listen 127.0.0.1:${port};`)
      .replace("http://127.0.0.1:8080/v1/route", `http://127.0.0.1:${sidecarPort}/v1/route`);
    await writeFile(join(dir, "nginx.conf"), conf);
    // Run as root (CI), nginx's workers are `nobody`: they must reach the body temp directory.
    await chmod(dir, 0o755);
    return startDataPlane(
      nginx,
      ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"],
      port,
    );
  },
  // @mirror_error: each reason its status and text; any other 500 (no sidecar) stays a 500.
  answers: mappedAnswers("\n", 500),
});
