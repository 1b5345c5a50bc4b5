/** The kubeconfig clients use to reach the fake API server. */
import { stringify } from "yaml";

/** The bearer token the kubeconfig carries; the server accepts any token (or none). */
export const ENVTEST_TOKEN = "envtest-token";

/**
 * A kubeconfig with one cluster, user and context, all named `envtest`. `insecure-skip-tls-verify`
 * is always set: the certificate is self-signed when serving https, and @kubernetes/client-node
 * refuses plain http without it.
 */
export function kubeconfigYaml(server: string, namespace = "default"): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "envtest", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "envtest", user: { token: ENVTEST_TOKEN } }],
    contexts: [{ name: "envtest", context: { cluster: "envtest", user: "envtest", namespace } }],
    "current-context": "envtest",
    preferences: {},
  });
}
