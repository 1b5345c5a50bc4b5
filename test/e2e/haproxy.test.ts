import { shippedPlane } from "../support/plane-in-front.ts";
import { describeDataPlane, mappedAnswers } from "./contract.ts";

// The shipped haproxy.cfg and Lua file with this test's paths and ports. The upstreams are IP
// addresses, so the cluster-dns resolvers section is never asked.
describeDataPlane({
  name: "HAProxy Lua httpclient",
  ...shippedPlane("haproxy"),
  // `http-request return` per reason; no answer from the sidecar, or another one, is a 502.
  answers: mappedAnswers("", 502),
  upstreamHeaders: ["x-mirror-app", "x-mirror-revision"],
});
