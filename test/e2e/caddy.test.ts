import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startDataPlane } from "../support/data-plane.ts";
import { findTool } from "../support/tools.ts";
import { describeDataPlane } from "./contract.ts";

/** forward_auth hands the sidecar's non-2xx answer to the client as it is, empty body included. */
const passedThrough = (status: number, reason: string, retryAfter: string | null = null) => ({
  status,
  reason,
  retryAfter,
  body: "",
});

describeDataPlane({
  name: "Caddy forward_auth",
  binary: findTool("caddy", ["/usr/bin/caddy", "/usr/local/bin/caddy"], ["version"]),
  async start(caddy, { port, dir, sidecarPort }) {
    // manifests/data-planes/caddy/Caddyfile with this test's ports, bound to 127.0.0.1 only.
    const conf = (await readFile("manifests/data-planes/caddy/Caddyfile", "utf8"))
      .replace(":8000 {", `:${port} {\n\tbind 127.0.0.1`)
      .replace("forward_auth 127.0.0.1:8080 {", `forward_auth 127.0.0.1:${sidecarPort} {`);
    const path = join(dir, "Caddyfile");
    await writeFile(path, conf);
    // Caddy keeps state under $HOME and the XDG directories: the scratch directory, not root's.
    const env = { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
    return startDataPlane(caddy, ["run", "--config", path, "--adapter", "caddyfile"], port, env);
  },
  answers: {
    secretUnavailable: passedThrough(503, "secret-unavailable", "5"),
    notSynced: passedThrough(503, "not-synced", "1"),
    unknownHost: passedThrough(404, "unknown-host"),
    badHost: passedThrough(400, "bad-host"),
    sidecarDown: {
      status: 502,
      reason: null,
      retryAfter: null,
      body: "routing sidecar unreachable",
    },
  },
});
