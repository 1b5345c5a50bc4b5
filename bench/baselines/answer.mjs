// The headers of a routed answer of the bench's Registry (an App, its upstream, the revision).
export const HEADERS = {
  "x-mirror-app": "app-1",
  "x-mirror-upstream": "http://app-1.tenant-1.svc.cluster.local:8080",
  "x-mirror-revision": "1",
};
