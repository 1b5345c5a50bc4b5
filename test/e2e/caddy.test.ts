import { startDataPlane, writeShippedConfig } from "../support/data-plane.ts";
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
  async start(caddy, setup) {
    // manifests/data-planes/caddy/Caddyfile with this test's ports, bound to 127.0.0.1 only.
    const launch = await writeShippedConfig("caddy", setup);
    return startDataPlane(caddy, launch.args, setup.port, launch.env);
  },
  answers: {
    secretUnavailable: passedThrough(503, "secret-unavailable", "5"),
    secretUnusable: passedThrough(503, "secret-unusable", "5"),
    credentialsOff: passedThrough(503, "credentials-off"),
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
  upstreamHeaders: ["x-mirror-app", "x-mirror-upstream", "x-mirror-revision"],
});
