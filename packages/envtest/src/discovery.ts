/**
 * Discovery documents. Aggregated discovery (apidiscovery.k8s.io/v2) is not served: clients that
 * ask for it also list plain application/json, and get the legacy APIVersions / APIGroupList /
 * APIResourceList documents.
 */

/**
 * The version reported at /version; kubectl's dispatcher picks its binary from the minor version.
 */
export const SERVER_VERSION = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.4+replica-mirror-envtest",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2025-04-22T00:00:00Z",
  goVersion: "go1.23.8",
  compiler: "gc",
  platform: "linux/amd64",
};

/** GET /api. */
export function apiVersions(serverAddress: string) {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

/** GET /apis: no API groups beyond the core group. */
export const apiGroupList = { kind: "APIGroupList", apiVersion: "v1", groups: [] };

/** GET /api/v1: the two resources served, with the verbs actually implemented. */
export const coreResources = {
  kind: "APIResourceList",
  groupVersion: "v1",
  resources: [
    {
      name: "namespaces",
      singularName: "namespace",
      namespaced: false,
      kind: "Namespace",
      verbs: ["create", "get", "list", "patch", "update", "watch"],
      shortNames: ["ns"],
      storageVersionHash: "Q3oi5N2YM8M=",
    },
    {
      name: "secrets",
      singularName: "secret",
      namespaced: true,
      kind: "Secret",
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      storageVersionHash: "S6u1pOWzb84=",
    },
  ],
};
