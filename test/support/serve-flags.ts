// The `serve` flags every in-test sidecar shares: envtest's kubeconfig, both listeners on free
// loopback ports, App Secrets watched cluster-wide (envtest's world is one small cluster), and
// local upstreams allowed (the tests' upstreams listen on 127.0.0.1; a test of the rule passes
// `--allow-local-upstreams false` after these).

/** `serve`'s flags for a sidecar against `kubeconfig`; `extra` come last, and of a repeated flag the last wins. */
export function serveFlags(
  kubeconfig: string,
  registryNamespace: string,
  extra: readonly string[] = [],
): string[] {
  return [
    "--kubeconfig",
    kubeconfig,
    "--registry-namespace",
    registryNamespace,
    "--listen",
    "127.0.0.1:0",
    "--ops-listen",
    "127.0.0.1:0",
    "--allow-cluster-wide-secrets",
    "true",
    "--allow-local-upstreams",
    "true",
    ...extra,
  ];
}
