import { copyFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startDataPlane } from "../support/data-plane.ts";
import { findTool } from "../support/tools.ts";
import { describeDataPlane, mappedAnswers } from "./contract.ts";

const SHIPPED = "manifests/data-planes/haproxy";

describeDataPlane({
  name: "HAProxy Lua httpclient",
  binary: findTool("haproxy", ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], ["-v"]),
  async start(haproxy, { port, dir, sidecarPort }) {
    // The shipped haproxy.cfg and Lua file with this test's paths and ports. The upstreams are
    // IP addresses, so the cluster-dns resolvers section is never asked.
    await copyFile(join(SHIPPED, "replica-mirror.lua"), join(dir, "replica-mirror.lua"));
    const conf = (await readFile(join(SHIPPED, "haproxy.cfg"), "utf8"))
      .replace("/usr/local/etc/haproxy/replica-mirror.lua", join(dir, "replica-mirror.lua"))
      .replace("bind :8000", `bind 127.0.0.1:${port}`)
      .replace("http://127.0.0.1:8080/v1/route", `http://127.0.0.1:${sidecarPort}/v1/route`);
    await writeFile(join(dir, "haproxy.cfg"), conf);
    return startDataPlane(haproxy, ["-db", "-f", join(dir, "haproxy.cfg")], port);
  },
  // `http-request return` per reason; no answer from the sidecar, or another one, is a 502.
  answers: mappedAnswers("", 502),
});
