import { shippedPlane } from "../support/plane-in-front.ts";
import { describeDataPlane, mappedAnswers } from "./contract.ts";

// The README's configuration, as shipped in manifests/base/nginx.conf, with this test's ports and
// paths: no cluster DNS resolver here, and the upstreams are IP addresses.
describeDataPlane({
  name: "nginx auth_request",
  ...shippedPlane("nginx"),
  // @mirror_error: each reason its status and text; any other 500 (no sidecar) stays a 500.
  answers: mappedAnswers("\n", 500),
  upstreamHeaders: ["x-mirror-app"],
});
